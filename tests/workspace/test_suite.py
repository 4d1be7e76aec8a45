"""The sandboxed test runner with real bubblewrap and real processes: no network, no variable of
the bot's environment, the worktree the only writable project path, the whole group killed at
the timeout."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
from pathlib import Path

import pytest

from app.workspace.suite import (
    TAIL_LINES,
    SandboxUnavailable,
    SuiteRunner,
    _python_toolchains,
)

pytestmark = pytest.mark.slow


def runner(command: str, *, bwrap: str | None, mode: str = "auto", timeout_s: float = 30):
    return SuiteRunner(
        command,
        mode=mode,  # type: ignore[arg-type]
        timeout_s=timeout_s,
        bwrap=bwrap,
        path=os.environ.get("PATH"),
        toolchains=_python_toolchains(),
    )


def probe(tmp_path: Path, body: str) -> Path:
    worktree = tmp_path / "wt"
    worktree.mkdir(exist_ok=True)
    (worktree / "probe.py").write_text(textwrap.dedent(body))
    return worktree


PY = sys.executable


def test_no_variable_of_the_bots_environment_reaches_the_tests(
    bwrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("OUROBOT_WEBHOOK_SECRET", "whsec-do-not-leak-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-do-not-leak-456")
    monkeypatch.setenv("INNOCENT_LOOKING", "plain-value-789")
    worktree = probe(tmp_path, "import os\nprint(sorted(os.environ.items()))\n")
    run = runner(f"{PY} probe.py", bwrap=bwrap, mode="required").run(worktree)
    assert run.passed, run.output_tail
    assert run.isolation == "bwrap"
    for leaked in ("whsec-do-not-leak", "sk-ant-do-not", "plain-value-789", "OUROBOT_"):
        assert leaked not in run.output_tail
    names = {name for name, _ in eval(run.output_tail)}  # noqa: S307 (our probe's own repr)
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "CI", "PYTEST_ADDOPTS", "PWD"}


def test_a_socket_to_a_local_port_reaches_nothing(bwrap: str, tmp_path: Path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        worktree = probe(
            tmp_path,
            f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2)
                print("CONNECTED")
            except OSError as exc:
                print("REFUSED", exc)
            try:
                socket.create_connection(("93.184.216.34", 80), timeout=2)
                print("INTERNET")
            except OSError as exc:
                print("NO ROUTE", exc)
            """,
        )
        run = runner(f"{PY} probe.py", bwrap=bwrap).run(worktree)
        assert "REFUSED" in run.output_tail and "NO ROUTE" in run.output_tail, run.output_tail
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing ever arrived


def test_the_worktree_is_the_only_writable_project_path(bwrap: str, tmp_path: Path):
    secret = tmp_path / "outside" / "credentials.json"
    secret.parent.mkdir()
    secret.write_text('{"token": "x"}')
    worktree = probe(
        tmp_path,
        f"""
        import os, sys
        open("written.txt", "w").write("ok")
        for target in ({str(Path(sys.prefix) / "x")!r}, "/usr/x", "/etc/x"):
            try:
                open(target, "w")
                print("WROTE", target)
            except OSError:
                print("READ-ONLY", target)
        print("SEES-OUTSIDE" if os.path.exists({str(secret)!r}) else "OUTSIDE-HIDDEN")
        print("SEES-HOME" if os.path.exists(os.path.expanduser("~/.bashrc")) else "HOME-EMPTY")
        """,
    )
    run = runner(f"{PY} probe.py", bwrap=bwrap).run(worktree)
    assert (worktree / "written.txt").read_text() == "ok"
    assert "WROTE" not in run.output_tail
    assert run.output_tail.count("READ-ONLY") == 3
    assert "OUTSIDE-HIDDEN" in run.output_tail and "HOME-EMPTY" in run.output_tail


def running(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("isolated", [True, False], ids=["bwrap", "scrubbed"])
def test_a_hanging_test_and_its_children_are_killed_at_the_timeout(
    isolated: bool, bwrap: str, tmp_path: Path
):
    marker = "3599.25" if isolated else "3599.5"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    command = f"sleep {marker} & sh -c 'sleep {marker}' & sleep {marker}"
    if isolated:
        command = f"setsid sleep {marker} & {command}"  # its own session: the namespace goes
    run = runner(command, bwrap=bwrap if isolated else None, timeout_s=0.5).run(worktree)
    assert run.timed_out and not run.passed and run.exit_code is None
    assert run.elapsed_s < 5
    assert "killed after" in run.summary()
    assert running(f"sleep\0{marker}") == []


def test_failing_output_comes_back_as_a_bounded_tail(bwrap: str, tmp_path: Path):
    worktree = probe(
        tmp_path,
        "for n in range(5000):\n    print(f'line {n}')\nraise SystemExit('assert 1 == 2')\n",
    )
    run = runner(f"{PY} probe.py", bwrap=bwrap).run(worktree)
    assert run.exit_code == 1 and not run.passed
    assert run.output_tail.endswith("assert 1 == 2")
    assert "line 4999" in run.output_tail and "line 10\n" not in run.output_tail
    assert len(run.output_tail.splitlines()) <= TAIL_LINES + 1
    assert run.output_tail.startswith("[... ")


def test_pytest_reports_test_ids(bwrap: str, tmp_path: Path):
    worktree = tmp_path / "wt"
    (worktree / "tests").mkdir(parents=True)
    (worktree / "tests" / "test_a.py").write_text(
        "import pytest\n"
        "def test_ok(): pass\n"
        "def test_bad(): assert False\n"
        "@pytest.mark.skip('later')\ndef test_later(): pass\n"
    )
    run = runner(f"{PY} -m pytest -q -p no:cacheprovider", bwrap=bwrap).run(worktree)
    assert run.junit is not None
    assert run.junit.tests == {
        "tests.test_a::test_ok": "passed",
        "tests.test_a::test_bad": "failed",
        "tests.test_a::test_later": "skipped",
    }


def test_auto_without_bubblewrap_falls_back_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_do_not_leak_0123456789")
    worktree = probe(tmp_path, "import os\nprint(sorted(os.environ))\n")
    suite_runner = runner(f"{PY} probe.py", bwrap=None, mode="auto")
    assert suite_runner.isolation == "scrubbed"
    assert suite_runner.warning is not None and "without network isolation" in suite_runner.warning
    run = suite_runner.run(worktree)
    assert run.passed and "GITHUB_TOKEN" not in run.output_tail


def test_required_without_bubblewrap_refuses_with_a_clear_message():
    with pytest.raises(SandboxUnavailable, match=r"sandbox: required, but bubblewrap \(bwrap\)"):
        runner("true", bwrap=None, mode="required")


def test_off_never_uses_bubblewrap_and_warns_of_nothing(bwrap: str):
    suite_runner = runner("true", bwrap=bwrap, mode="off")
    assert suite_runner.isolation == "scrubbed" and suite_runner.warning is None


def test_a_command_that_cannot_start_is_a_failed_run(tmp_path: Path):
    run = runner("true", bwrap=None, mode="off").run(tmp_path / "missing")
    assert not run.passed and "could not start" in run.output_tail


def test_a_toolchain_under_the_hosts_tmp_is_visible_over_the_sandboxs_own_tmp(
    bwrap: str, tmp_path: Path
):
    # A fresh clone in /tmp/x with its .venv (as `make demo` there makes): the sandbox's fresh
    # /tmp must not hide the toolchain bound from the host's /tmp.
    tool = Path(tmp_path) / "toolchain" / "bin"
    tool.mkdir(parents=True)
    (tool / "hello-tool").write_text("#!/bin/sh\necho tool-ran\n")
    (tool / "hello-tool").chmod(0o755)
    assert str(tool).startswith("/tmp/")
    suite = SuiteRunner(
        "hello-tool && ls /tmp",
        mode="required",
        timeout_s=30,
        bwrap=bwrap,
        path=f"{tool}:/usr/bin:/bin",
        toolchains=[],
    )
    run = suite.run(probe(tmp_path, "\n"))
    assert run.passed, run.output_tail
    assert "tool-ran" in run.output_tail
