"""Network for the setup phase: only the hosts a repository names, through a filtering proxy.

A caged run has no network at all (its own loopback, nothing else). The setup phase alone may
reach the hosts of `setup.network` (the public package registries by default), and nothing else:
not ourobot's services on the host's loopback, not a metadata endpoint, not the internet at
large. The filtering is tinyproxy's (an existing, audited proxy, not a home-made one):
`FilterDefaultDeny` with one anchored pattern per allowed host (`host` for HTTP on port 80 and
CONNECT on 443, `host:port` for exactly that port), and `ConnectPort` for the ports named.

The sandbox keeps its own network namespace. The proxy listens on the host's loopback, which
the sandbox cannot reach; a Unix socket bound into the sandbox joins the two (`HostRelay` on the
host side, `relay.py` inside, on 127.0.0.1:3128), and the run's `HTTP_PROXY` and friends point
there. A program that ignores the proxy variables reaches nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.errors import UserError

INSIDE_PORT = 3128
INSIDE_SOCKET = "/run/ourobot/proxy.sock"
INSIDE_RELAY = "/run/ourobot/relay.py"
_START_TIMEOUT_S = 10.0


class NetworkUnavailable(UserError):
    """The setup phase needs network and the filtering proxy cannot run here."""


@dataclass(frozen=True)
class Allowed:
    """One `setup.network` entry as the proxy's filter and ports."""

    host: str
    port: int | None

    @classmethod
    def parse(cls, entry: str) -> Allowed:
        host, _, port = entry.partition(":")
        return cls(host.lower(), int(port) if port else None)

    def patterns(self) -> list[str]:
        name = re.escape(self.host)
        if self.port is None:
            return [rf"^(http://)?{name}(:80)?(/|$)", rf"^{name}:443$"]
        return [rf"^(https?://)?{name}:{self.port}(/|$)"]

    def ports(self) -> list[int]:
        return [443] if self.port is None else [self.port]


def proxy_env() -> dict[str, str]:
    """The variables that send a run's package managers through the relay."""
    url = f"http://127.0.0.1:{INSIDE_PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy",
             "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY")  # fmt: skip
    return {**dict.fromkeys(names, url), "NO_PROXY": "", "no_proxy": ""}


def tinyproxy_config(port: int, filter_file: Path, allowed: Sequence[Allowed]) -> str:
    ports = sorted({p for entry in allowed for p in entry.ports()})
    lines = [
        f"Port {port}",
        "Listen 127.0.0.1",
        "Timeout 600",
        "MaxClients 64",
        f'Filter "{filter_file}"',
        "FilterDefaultDeny Yes",
        "FilterExtended On",
        "FilterURLs On",
        "FilterCaseSensitive Off",
        "DisableViaHeader Yes",
        "LogLevel Notice",
        *(f"ConnectPort {p}" for p in ports),
    ]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def filtering_proxy(entries: Sequence[str]) -> Iterator[Path]:
    """tinyproxy allowing `entries`, joined to a Unix socket; yields the socket's path."""
    binary = shutil.which("tinyproxy")
    if binary is None:
        raise NetworkUnavailable(
            "setup.network needs tinyproxy, the filtering proxy the setup phase goes through: "
            "install it (apt-get install tinyproxy)"
        )
    allowed = [Allowed.parse(entry) for entry in entries]
    with tempfile.TemporaryDirectory(prefix="ourobot-proxy-") as scratch:
        folder = Path(scratch)
        filter_file = folder / "filter"
        filter_file.write_text("\n".join(p for a in allowed for p in a.patterns()) + "\n")
        port = _free_port()
        (folder / "tinyproxy.conf").write_text(tinyproxy_config(port, filter_file, allowed))
        proxy = subprocess.Popen(
            [binary, "-d", "-c", str(folder / "tinyproxy.conf")], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True, env={},
        )  # fmt: skip
        try:
            _wait_listening(port, proxy)
            with HostRelay(folder / "proxy.sock", port) as relay:
                yield relay.path
        finally:
            proxy.kill()
            proxy.wait()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int, proxy: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proxy.poll() is not None:
            raise NetworkUnavailable(f"tinyproxy exited at start ({proxy.returncode})")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise NetworkUnavailable(f"tinyproxy did not listen within {_START_TIMEOUT_S:.0f}s")


class _Relay(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    target_port = 0


class _Join(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        server = self.server
        assert isinstance(server, _Relay)
        with socket.create_connection(("127.0.0.1", server.target_port), 10) as upstream:
            other = threading.Thread(target=_copy, args=(upstream, self.request), daemon=True)
            other.start()
            _copy(self.request, upstream)
            other.join(timeout=600)


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


class HostRelay:
    """The host end of the join: a Unix socket whose connections go to the proxy's port."""

    def __init__(self, path: Path, port: int) -> None:
        self.path = path
        # A socket's path must fit sun_path (108 bytes) and a temporary folder may be deeper:
        # bound through the folder's descriptor, the name is short wherever the folder is.
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            self.server = _Relay(f"/proc/self/fd/{folder}/{path.name}", _Join)
        finally:
            os.close(folder)
        self.server.target_port = port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HostRelay:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
