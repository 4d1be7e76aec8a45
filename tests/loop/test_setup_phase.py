"""The setup phase and the toolchain, with real bubblewrap, a real filtering proxy (tinyproxy),
real pip and a package index this test serves on loopback (nothing leaves the machine): a
project whose tests need a package the worker does not have reaches a green baseline, reuses
the prepared environment next time, and the setup reaches nothing else."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.demo_setup import PROJECT, PackageIndex
from app.loop.setup_phase import written
from app.workspace.cage.toolchain import resolve_shims
from reviewers.fake_servers import Text
from tests.loop.conftest import IMPLEMENTER, Loop

pytestmark = pytest.mark.slow


@pytest.fixture
def index(tmp_path: Path) -> Iterator[PackageIndex]:
    # The demo's own index and wheel: one third-party package (calc-testkit) on loopback.
    served = PackageIndex(tmp_path / "index")
    served.start()
    try:
        yield served
    finally:
        served.stop()


TESTS = """\
import socket
import unittest

import calc_testkit


class DepTest(unittest.TestCase):
    def test_the_dependency_is_there(self):
        self.assertTrue(calc_testkit.close(0.1 + 0.2, 0.3))

    def test_no_network_after_setup(self):
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", {port}), timeout=2)
"""
PROBE = """\
import socket, sys, urllib.request
for url in ("http://127.0.0.1:{other}/", "http://127.0.0.1:{port}.evil/"):
    try:
        urllib.request.urlopen(url, timeout=5)
        sys.exit("setup reached " + url)
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2)
    sys.exit("setup connected directly")
except OSError:
    pass
if open(".env").read():
    sys.exit("setup read the secret file")
"""


def test_setup_installs_a_test_dependency_through_the_proxy_and_is_reused(
    loop: Loop, index: PackageIndex, bwrap: str, tinyproxy: str
):
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        other.setblocking(False)
        port, other_port = index.port, other.getsockname()[1]
        setup = (
            "python3 probe_setup.py && python3 -m venv .venv && .venv/bin/pip install -q "
            f"--disable-pip-version-check --index-url {index.url} {PROJECT}"
        )
        config = (
            f"setup: {{command: '{setup}', network: ['127.0.0.1:{port}'], "
            "cache_key: [requirements.txt]}\n"
        )
        loop.project(
            command=".venv/bin/python -m unittest discover -s tests -t . -q",
            extra_config=config,
            files={
                "tests/test_dep.py": TESTS.format(port=port),
                "probe_setup.py": PROBE.format(other=other_port, port=port),
                "requirements.txt": f"{PROJECT}\n",
                ".env": "SECRET=do-not-read-me-0123\n",
            },
        )
        loop.models.script(IMPLEMENTER, Text("Nothing to change.\n\nALREADY SATISFIED"))
        first = loop.run("Nothing to do.")
        assert first.baseline == "passed", (first.reason, loop.progress)
        assert any(line.startswith("setup: ran in") for line in loop.progress), loop.progress
        assert index.downloads == 1
        with pytest.raises(BlockingIOError):
            other.accept()  # the setup never reached the other port
        loop.models.script(IMPLEMENTER, Text("Nothing to change.\n\nALREADY SATISFIED"))
        second = loop.run("Nothing to do either.", ticket_id="T-2")
    assert second.baseline == "passed"
    assert any(line.startswith("setup: cached") for line in loop.progress)
    print("\n".join(line for line in loop.progress if line.startswith("setup:")))
    assert index.downloads == 1  # nothing reinstalled
    # What setup wrote is the cycle's environment, never the model's work.
    assert ".venv" not in loop.repo.git("ls-tree", "-r", "--name-only", "HEAD")


def test_a_failing_setup_ends_the_cycle_legibly_before_any_model_call(
    loop: Loop, bwrap: str, tinyproxy: str
):
    loop.project(extra_config="setup: {command: 'echo cannot install >&2; exit 3'}\n")
    result = loop.run("Anything.")
    assert result.outcome == "blocked" and result.error_class == "setup"
    assert "setup.command failed (exit 3)" in result.reason and "cannot install" in result.reason
    assert loop.models.requests_for(IMPLEMENTER) == []


def test_what_setup_wrote_is_what_the_base_does_not_track(tmp_path: Path):
    for path in ("src/pkg/__init__.py", "src/pkg/_version.py", ".venv/bin/python", "README"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    found = written(tmp_path, ["src/pkg/__init__.py", "README"])
    assert sorted(found) == [".venv", "src/pkg/_version.py"]


def test_a_version_managers_shim_resolves_to_the_real_interpreter(
    loop: Loop, bwrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # A pyenv-style shim first on PATH: inside the sandbox it would exit 127 (its manager's
    # files are not there); the manager says where the real interpreter is.
    root = tmp_path / "manager" / ".pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "bin").mkdir()
    shim = root / "shims" / "python3"
    shim.write_text('#!/bin/sh\nexec /nonexistent/libexec/pyenv exec python3 "$@"\n')
    shim.chmod(0o755)
    manager = root / "bin" / "pyenv"
    real = Path(sys.base_prefix)
    manager.write_text(f'#!/bin/sh\n[ "$1" = prefix ] && echo {real} && exit 0\nexit 1\n')
    manager.chmod(0o755)
    path = f"{root / 'shims'}:/usr/bin:/bin"
    assert str(real / "bin") in resolve_shims(path)
    monkeypatch.setenv("PATH", path)
    loop.project(command="python3 -c 'import sys; print(sys.prefix)'")
    loop.models.script(IMPLEMENTER, Text("ALREADY SATISFIED"))
    result = loop.run("Nothing to do.")
    assert result.baseline == "passed", result.reason


def test_a_test_command_not_found_is_said_so_with_the_sandboxs_path(loop: Loop):
    loop.project(command="no-such-test-runner -q")
    result = loop.run("Anything.")
    assert result.outcome == "blocked" and result.error_class == "toolchain"
    assert result.reason.startswith(
        "the test command was not found inside the sandbox: `no-such-test-runner` (sandbox PATH: "
    )
    assert "already failed at the base" not in result.reason
    assert loop.models.requests_for(IMPLEMENTER) == []
