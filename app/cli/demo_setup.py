"""The demo project's third-party test dependency, installed by its `setup.command`.

The demo's tests compare floats with `calc-testkit`, a package ourobot does not have: the
repository's `setup.command` installs it in the sandbox from a package index the demo serves on
loopback and names in `setup.network`, the way a real project's setup reaches PyPI through the
setup phase's filtering proxy. Nothing leaves the machine. The wheel is built here, by hand (a
wheel is a zip with three metadata files), so no build tool is needed.

The setup phase needs bubblewrap and tinyproxy; on a machine without them the demo's project
has no dependency (`unavailable` says why, and the demo prints it).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import io
import shlex
import shutil
import threading
import zipfile
from pathlib import Path

PROJECT = "calc-testkit"
MODULE = "calc_testkit"
VERSION = "1.0"
TESTKIT = (
    '"""Float comparison for calculator tests."""\n\n\n'
    "def close(a: float, b: float, tolerance: float = 1e-9) -> bool:\n"
    "    return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))\n"
)
# Where setup.command installs it, inside the worktree; the test command puts it on the path.
TARGET = ".deps"


def unavailable(unsandboxed: str | None) -> str | None:
    """Why the setup phase cannot run on this machine, or None when it can."""
    if unsandboxed is not None:
        return f"bubblewrap cannot run here ({unsandboxed})"
    if shutil.which("tinyproxy") is None:
        return "tinyproxy is not installed (apt-get install tinyproxy)"
    return None


def wheel() -> tuple[str, bytes]:
    """`calc-testkit`'s wheel: its file name and bytes."""
    info = f"{MODULE}-{VERSION}.dist-info"
    files = {
        f"{MODULE}/__init__.py": TESTKIT.encode(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {PROJECT}\nVersion: {VERSION}\n".encode()
        ),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: ourobot-demo\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = [f"{path},sha256={_digest(data)},{len(data)}" for path, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return f"{MODULE}-{VERSION}-py3-none-any.whl", buffer.getvalue()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class PackageIndex:
    """A PEP 503 simple index of one wheel on 127.0.0.1, in a thread; counts the downloads."""

    def __init__(self, root: Path) -> None:
        name, data = wheel()
        (root / "files").mkdir(parents=True, exist_ok=True)
        (root / "files" / name).write_bytes(data)
        project = root / "simple" / PROJECT
        project.mkdir(parents=True, exist_ok=True)
        (project / "index.html").write_text(f'<a href="../../files/{name}">{name}</a>\n')
        self.downloads = 0
        index = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return  # the demo prints its own lines

            def do_GET(self) -> None:
                if self.path.endswith(".whl"):
                    index.downloads += 1
                super().do_GET()

        self._server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
        )
        self.port = int(self._server.server_address[1])
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}/simple/"

    def start(self) -> None:
        threading.Thread(target=self._server.serve_forever, name="demo-index", daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def install_command(python: str, index_url: str) -> str:
    """The shell command that installs the dependency into `TARGET` with `python`'s pip."""
    return (
        f"{shlex.quote(python)} -m pip install -q --disable-pip-version-check --no-cache-dir "
        f"--target {TARGET} --index-url {shlex.quote(index_url)} {PROJECT}"
    )


def ci_command(python: str, index_url: str) -> list[str]:
    """The sandbox CI's `ci/test`: the same install, then the tests, on each head."""
    tests = f"PYTHONPATH={TARGET} exec {shlex.quote(python)} -m pytest -q -p no:cacheprovider"
    return ["/bin/sh", "-c", f"{install_command(python, index_url)} && {tests}"]
