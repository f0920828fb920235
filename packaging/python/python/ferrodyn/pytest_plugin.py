"""pytest fixtures for Ferrodyn, registered by the wheel's pytest11 entry
point (nothing to import or configure):

- ``ferrodyn_server`` (session): an in-memory ``ferrodyn serve`` on a free
  port, ready when the fixture returns (no sleeps), stopped at the end. With
  pytest-xdist every worker has its own; to share one instead, start it
  yourself (``ferrodyn serve --in-memory --namespaces access-key --clock
  manual``) and set ``FERRODYN_ENDPOINT`` to its URL: the per-test
  namespaces keep the workers apart.
- ``ferrodyn`` (function): a fresh namespace, an access key with tables of
  its own, so tests never see each other's tables and need no clean-up. It
  sets ``AWS_ENDPOINT_URL_DYNAMODB``, ``AWS_ACCESS_KEY_ID`` and the region for
  the test, so code that builds its own SDK clients lands in it. It has
  ``.client()``, ``.resource()``, ``.snapshot(name)``, ``.restore(name)``,
  ``.reset()``, ``.faults(...)`` and the clock: ``.advance("25h")``,
  ``.set_time(...)``, ``.now()``.
- ``ferrodyn_endpoint`` (session): the server's URL.
- ``dynamodb_client`` and ``dynamodb_resource`` (function): boto3 objects
  for the test's namespace (need boto3: ``pip install ferrodyn[boto3]``).

The clock is manual by default: it starts at the real time and moves only
when a test advances it, and it is the server's, so it only moves forward
over a session. Options: ``--ferrodyn-clock wall`` (or ini
``ferrodyn_clock = wall``) and ``--ferrodyn-arg=--flag`` (repeatable, ini
``ferrodyn_args``) for more ``ferrodyn serve`` flags.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Iterator, Optional

import pytest

from ferrodyn.server import Namespace, Server, connect, start


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ferrodyn")
    group.addoption(
        "--ferrodyn-clock",
        choices=["manual", "wall"],
        default=None,
        help="the test server's clock (default: manual)",
    )
    group.addoption(
        "--ferrodyn-arg",
        action="append",
        default=[],
        help="one more `ferrodyn serve` flag for the test server (repeatable)",
    )
    parser.addini("ferrodyn_clock", "the test server's clock: manual or wall", default="manual")
    parser.addini("ferrodyn_args", "more `ferrodyn serve` flags", type="args", default=[])


class Ferrodyn(Namespace):
    """A test's namespace, with the server's clock and faults beside it."""

    def now(self):
        return self.server.now()

    def advance(self, duration: Any) -> int:
        return self.server.advance(duration)

    def set_time(self, when: Any) -> int:
        return self.server.set_time(when)

    def faults(self, rules: Iterable[Any] = (), seed: Optional[int] = None) -> None:
        """Injects failures until the test ends: rules as ``ferrodyn serve
        --fault`` text (``"BatchWriteItem=unprocessed@0.5"``) or dicts. They
        fire for this test's namespace only (other tests sharing the server
        are untouched) and are cleared after the test."""
        body: dict = {"rules": list(rules)}
        if seed is not None:
            body["seed"] = seed
        self.server.request("PUT", "/ferrodyn/faults", self.access_key, body)


@pytest.fixture(scope="session")
def ferrodyn_server(pytestconfig: pytest.Config) -> Iterator[Server]:
    shared = os.environ.get("FERRODYN_ENDPOINT")
    if shared:
        yield connect(shared)
        return
    clock = pytestconfig.getoption("ferrodyn_clock") or pytestconfig.getini("ferrodyn_clock")
    args = list(pytestconfig.getini("ferrodyn_args")) + pytestconfig.getoption("ferrodyn_arg")
    server = start(clock=clock, args=args)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def ferrodyn_endpoint(ferrodyn_server: Server) -> str:
    return ferrodyn_server.endpoint


@pytest.fixture
def ferrodyn(ferrodyn_server: Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ferrodyn]:
    namespace = ferrodyn_server.namespace()
    test = Ferrodyn(ferrodyn_server, namespace.access_key)
    for name, value in test.env().items():
        monkeypatch.setenv(name, value)
    try:
        yield test
    finally:
        ferrodyn_server.request("DELETE", "/ferrodyn/faults", test.access_key)
        test.reset()


def _boto3_or_fail() -> None:
    try:
        import boto3  # noqa: F401
    except ImportError:
        pytest.fail("this fixture needs boto3: pip install 'ferrodyn[boto3]'", pytrace=False)


@pytest.fixture
def dynamodb_client(ferrodyn: Ferrodyn):
    _boto3_or_fail()
    return ferrodyn.client()


@pytest.fixture
def dynamodb_resource(ferrodyn: Ferrodyn):
    _boto3_or_fail()
    return ferrodyn.resource()
