"""The setup phase's filtering proxy from the host's side: real tinyproxy, a real Unix socket."""

from __future__ import annotations

import http.server
import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.workspace.cage.network import filtering_proxy


@pytest.fixture
def served() -> Iterator[int]:
    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _get_through(sock: Path, url: str) -> str:
    with socket.socket(socket.AF_UNIX) as client:
        client.settimeout(10)
        client.connect(str(sock))
        client.sendall(f"GET {url} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
        data = b""
        while chunk := client.recv(65536):
            data += chunk
    return data.decode(errors="replace")


def test_a_temporary_folder_deeper_than_a_socket_path_still_works(
    tinyproxy: str, served: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # A socket's path must fit 108 bytes; TMPDIR (here, or a CI runner's) may be deeper.
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with filtering_proxy([f"127.0.0.1:{served}"]) as sock:
        assert len(str(sock)) > 108 and sock.is_socket()
        # Connected through a short name for the same folder, as the sandbox's bind gives it.
        folder = os.open(sock.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            alias = Path(f"/proc/self/fd/{folder}/{sock.name}")
            allowed = _get_through(alias, f"http://127.0.0.1:{served}/")
            refused = _get_through(alias, f"http://127.0.0.1:{served + 1}/")
        finally:
            os.close(folder)
    assert allowed.startswith("HTTP/1.") and " 200 " in allowed.splitlines()[0]
    assert allowed.endswith("hello")
    assert " 200 " not in refused.splitlines()[0]  # another port: the filter's refusal
