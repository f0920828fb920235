"""Ferrodyn from Python: start the `ferrodyn` server this wheel installed
and drive its test-harness endpoints (namespaces, snapshots, the clock).

    from ferrodyn import start

    with start() as server:          # in-memory, a free port, ready on return
        ns = server.namespace()      # tables of its own (an access key)
        client = ns.client()         # a boto3 client for it (needs boto3)
        ...
        ns.snapshot("seeded"); ns.restore("seeded"); ns.reset()
        server.advance("25h")        # the manual clock: TTL deletes happen now

The pytest plugin (ferrodyn.pytest_plugin) wraps the same objects in
fixtures.
"""

from ferrodyn.server import FerrodynError, Namespace, Server, binary, connect, start

__all__ = ["FerrodynError", "Namespace", "Server", "binary", "connect", "start"]
