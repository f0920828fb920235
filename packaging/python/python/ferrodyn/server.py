"""The `ferrodyn serve` process and its harness endpoints.

A server is started with ``--in-memory --port 0`` and is ready when it
prints its listening line (it binds before printing), so nothing here
sleeps or polls. Its life is tied to ours: it exits when its standard input
closes, which happens when this process exits, however it exits.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import sysconfig
import tempfile
import threading
import urllib.error
import urllib.request
import uuid
from typing import Any, Iterable, Optional

_READY_TIMEOUT_SECONDS = 30


class FerrodynError(Exception):
    """The server refused a harness request, or could not be started."""


def binary() -> str:
    """The `ferrodyn` executable: $FERRODYN_BIN, else the one this wheel
    installed beside the interpreter's scripts, else the first on PATH."""
    explicit = os.environ.get("FERRODYN_BIN")
    if explicit:
        return explicit
    name = "ferrodyn.exe" if os.name == "nt" else "ferrodyn"
    beside = os.path.join(sysconfig.get_path("scripts"), name)
    if os.path.isfile(beside):
        return beside
    found = shutil.which(name)
    if found:
        return found
    raise FerrodynError("no ferrodyn binary: install the ferrodyn wheel or set FERRODYN_BIN")


def start(
    *,
    clock: str = "manual",
    namespaces: bool = True,
    region: str = "us-east-1",
    args: Iterable[str] = (),
) -> "Server":
    """Starts an in-memory server on a free port and returns once it answers.

    ``clock="manual"`` (the default) freezes time at start until
    :meth:`Server.advance` moves it; ``"wall"`` follows the real clock.
    ``namespaces`` gives each access key its own tables. ``args`` are more
    ``ferrodyn serve`` flags (``["--fault", "BatchWriteItem=unprocessed@0.5"]``).
    """
    command = [binary(), "serve", "--in-memory", "--port", "0", "--exit-on-stdin-eof"]
    command += ["--clock", clock, "--region", region]
    if namespaces:
        command += ["--namespaces", "access-key"]
    command += list(args)
    log = tempfile.NamedTemporaryFile(prefix="ferrodyn-", suffix=".log", delete=False)
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
    )
    first_line: list = []
    reader = threading.Thread(target=lambda: first_line.append(process.stdout.readline()))
    reader.daemon = True
    reader.start()
    reader.join(_READY_TIMEOUT_SECONDS)
    line = first_line[0].decode() if first_line else ""
    prefix = "ferrodyn listening on "
    if not line.startswith(prefix):
        process.kill()
        process.wait()
        with open(log.name, encoding="utf-8", errors="replace") as f:
            detail = f.read()
        raise FerrodynError(f"ferrodyn did not start ({' '.join(command)}): {line!r}\n{detail}")
    # Keep draining stdout so a chatty server never blocks on a full pipe.
    drain = threading.Thread(target=lambda: [None for _ in process.stdout])
    drain.daemon = True
    drain.start()
    endpoint = line[len(prefix):].split()[0]
    return Server(process, endpoint, region, log.name)


def connect(endpoint: str, region: str = "us-east-1") -> "Server":
    """A server started elsewhere (say, once for every pytest-xdist worker,
    with ``--namespaces access-key``); :meth:`Server.stop` leaves it running."""
    return Server(None, endpoint.rstrip("/"), region, None)


class Server:
    """A running `ferrodyn serve`."""

    def __init__(
        self,
        process: Optional[subprocess.Popen],
        endpoint: str,
        region: str,
        log: Optional[str],
    ):
        self.process = process
        self.endpoint = endpoint
        self.region = region
        self.log = log

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Stops the server (closing its stdin, as its exit condition); a
        server this process did not start is left alone."""
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def namespace(self, name: Optional[str] = None) -> "Namespace":
        """A namespace: an access key with tables of its own (a fresh one
        unless ``name`` is given)."""
        return Namespace(self, name or "test" + uuid.uuid4().hex[:20])

    def now(self) -> _dt.datetime:
        """The server's clock."""
        return _parse_time(self.request("GET", "/ferrodyn/clock")["now"])

    def advance(self, duration: Any) -> int:
        """Moves the manual clock forward (``"25h"``, ``"1h 30m"``, seconds,
        or a ``timedelta``) and sweeps expired items at once; returns how
        many Time to Live deleted."""
        if isinstance(duration, _dt.timedelta):
            duration = duration.total_seconds()
        return self.request("POST", "/ferrodyn/clock", body={"advance": duration})["expiredItems"]

    def set_time(self, when: Any) -> int:
        """Sets the manual clock (an RFC 3339 string or an aware datetime),
        never backwards; returns how many items Time to Live deleted."""
        if isinstance(when, _dt.datetime):
            when = when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return self.request("POST", "/ferrodyn/clock", body={"set": when})["expiredItems"]

    def request(self, method: str, path: str, key: str = "ferrodyn", body: Any = None) -> dict:
        """One harness request as access key ``key``; its JSON answer."""
        data = None if body is None else json.dumps(body).encode()
        headers = {
            "authorization": f"AWS4-HMAC-SHA256 Credential={key}/20200101/{self.region}/"
            "dynamodb/aws4_request, SignedHeaders=host, Signature=0",
            "content-type": "application/json",
        }
        request = urllib.request.Request(self.endpoint + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise FerrodynError(f"{method} {path}: {error.read().decode()}") from None


class Namespace:
    """An access key's tables on a server started with namespaces."""

    secret = "ferrodyn"

    def __init__(self, server: Server, access_key: str):
        self.server = server
        self.access_key = access_key

    @property
    def endpoint(self) -> str:
        return self.server.endpoint

    @property
    def region(self) -> str:
        return self.server.region

    def env(self) -> dict:
        """Environment variables that point AWS SDKs at this namespace."""
        return {
            "AWS_ENDPOINT_URL_DYNAMODB": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_REGION": self.region,
        }

    def boto3_kwargs(self) -> dict:
        return {
            "endpoint_url": self.endpoint,
            "region_name": self.region,
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret,
        }

    def client(self, **overrides: Any):
        """A boto3 DynamoDB client for this namespace."""
        import boto3

        return boto3.client("dynamodb", **{**self.boto3_kwargs(), **overrides})

    def resource(self, **overrides: Any):
        """A boto3 DynamoDB resource for this namespace."""
        import boto3

        return boto3.resource("dynamodb", **{**self.boto3_kwargs(), **overrides})

    def snapshot(self, name: str) -> dict:
        """Saves every table of the namespace as ``name``."""
        return self.server.request("POST", f"/ferrodyn/snapshots/{name}", self.access_key)

    def restore(self, name: str) -> dict:
        """Puts the namespace's tables back as snapshot ``name`` saved them."""
        return self.server.request("POST", f"/ferrodyn/snapshots/{name}/restore", self.access_key)

    def reset(self) -> int:
        """Deletes every table of the namespace; returns how many."""
        return self.server.request("DELETE", "/ferrodyn/data", self.access_key)["tablesDeleted"]


def _parse_time(text: str) -> _dt.datetime:
    return _dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=_dt.timezone.utc)
