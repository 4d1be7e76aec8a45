"""The cage with real bubblewrap, real processes and real cgroups: what a run can see, reach and
take, and that every bound it hits is named. Run as root here (CI); `test_cage_unprivileged.py`
runs the same probes as an unprivileged user."""

from __future__ import annotations

import binascii
import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

from app.workspace.cage.entry import TAIL_LINES, Cage, CageJob, SandboxUnavailable
from app.workspace.cage.limits import Enforcement, Limits, MiB
from app.workspace.cage.toolchain import Toolchain, python_toolchains
from app.workspace.suite import SuiteRunner

pytestmark = pytest.mark.slow
PY = sys.executable
SMALL = Limits(processes=64, memory_bytes=256 * MiB, tmp_bytes=64 * MiB, disk_bytes=128 * MiB)


def cage(bwrap: str | None, mode: str = "required", limits: Limits | None = None) -> Cage:
    return Cage(
        mode=mode,  # type: ignore[arg-type]
        bwrap=bwrap,
        toolchain=Toolchain.resolve(os.environ.get("PATH"), python_toolchains()),
        limits=limits or SMALL,
    )


def project(tmp_path: Path, body: str = "", **files: str) -> Path:
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    (root / "probe.py").write_text(textwrap.dedent(body))
    for name, text in files.items():
        (root / name.replace("__", "/")).parent.mkdir(parents=True, exist_ok=True)
        (root / name.replace("__", "/")).write_text(text)
    return root


def run(c: Cage, root: Path, command: str = f"{PY} probe.py", **kwargs):
    return c.run(CageJob(command, root, timeout_s=kwargs.pop("timeout_s", 30), **kwargs))


@pytest.fixture(params=["bwrap", "off"])
def any_cage(request: pytest.FixtureRequest) -> Cage:
    if request.param == "off":
        return cage(None, "off")
    return cage(request.getfixturevalue("bwrap"))


# ---- what a run can see -------------------------------------------------------------------------


def test_no_variable_of_the_bots_environment_reaches_a_run_nor_its_process_1(
    any_cage: Cage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("OUROBOT_WEBHOOK_SECRET", "whsec-do-not-leak-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-do-not-leak-456")
    root = project(
        tmp_path,
        """
        import os
        print(sorted(os.environ.items()))
        for pid in ("1", str(os.getppid())):
            try:
                print(pid, open(f"/proc/{pid}/environ", "rb").read())
            except OSError as exc:
                print(pid, "unreadable", exc.errno)
        """,
    )
    result = run(any_cage, root)
    assert result.passed, result.output_tail
    for leaked in ("whsec-do-not-leak", "sk-ant-do-not", "OUROBOT_"):
        assert leaked not in result.output_tail
    names = {name for name, _ in eval(result.output_tail.splitlines()[0])}  # noqa: S307
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "CI", "PWD"}


def test_the_harness_is_unreadable_to_an_unsandboxed_run_even_as_root(tmp_path: Path):
    # Without bubblewrap a run shares the host's /proc: the harness is not dumpable, and the
    # run holds no capability (CAP_SYS_PTRACE would read it anyway).
    root = project(
        tmp_path,
        f"""
        import os
        print(open("/proc/self/status").read().split("CapEff:")[1].split()[0])
        try:
            open("/proc/{os.getpid()}/environ", "rb").read()
            print("READ-THE-HARNESS")
        except OSError as exc:
            print("refused", exc.errno)
        """,
    )
    result = run(cage(None, "off"), root)
    assert result.passed, result.output_tail
    assert result.output_tail.splitlines()[0] == "0000000000000000"
    assert "READ-THE-HARNESS" not in result.output_tail


def test_a_socket_to_a_local_port_or_the_internet_reaches_nothing(bwrap: str, tmp_path: Path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        root = project(
            tmp_path,
            f"""
            import socket
            for host, port in (("127.0.0.1", {port}), ("93.184.216.34", 80)):
                try:
                    socket.create_connection((host, port), timeout=2)
                    print("CONNECTED", host)
                except OSError:
                    print("NOTHING", host)
            """,
        )
        result = run(cage(bwrap), root)
        assert result.output_tail.count("NOTHING") == 2, result.output_tail
        with pytest.raises(BlockingIOError):
            server.accept()


def test_only_the_project_is_writable_and_no_capability_remounts_a_bind(bwrap: str, tmp_path: Path):
    outside = tmp_path / "outside" / "credentials.json"
    outside.parent.mkdir()
    outside.write_text('{"token": "x"}')
    root = project(
        tmp_path,
        f"""
        import os, subprocess, sys
        open("written.txt", "w").write("ok")
        for target in ({str(Path(sys.prefix) / "x")!r}, "/usr/x", "/etc/x", "/x", "/dev/x"):
            try:
                open(target, "w")
                print("WROTE", target)
            except OSError:
                print("READ-ONLY", target)
        remount = subprocess.run(["mount", "-o", "remount,rw", "/usr"], capture_output=True)
        print("REMOUNTED" if remount.returncode == 0 else "NO-REMOUNT")
        print(open("/proc/self/status").read().split("CapEff:")[1].split()[0])
        print("SEES-OUTSIDE" if os.path.exists({str(outside)!r}) else "OUTSIDE-HIDDEN")
        print("HOME", sorted(os.listdir("/home")) if os.path.isdir("/home") else "absent")
        """,
    )
    result = run(cage(bwrap), root)
    assert (root / "written.txt").read_text() == "ok"
    assert "WROTE" not in result.output_tail and result.output_tail.count("READ-ONLY") == 5
    assert "NO-REMOUNT" in result.output_tail and "0000000000000000" in result.output_tail
    assert "OUTSIDE-HIDDEN" in result.output_tail and "HOME absent" in result.output_tail


def test_the_apps_key_in_etc_and_the_repositorys_env_file_are_unreadable_hex_or_not(
    bwrap: str, tmp_path: Path
):
    if os.geteuid() != 0:
        pytest.skip("writing under /etc needs root")
    key_dir = Path("/etc") / f"ourobot-test-{os.getpid()}"
    key_dir.mkdir()
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7ourobotkeymaterial\n"
    (key_dir / "app.pem").write_text(key)
    try:
        root = project(
            tmp_path,
            f"""
            import binascii, glob, os
            for path in glob.glob("/etc/**", recursive=True) + [{str(key_dir / "app.pem")!r}]:
                try:
                    if os.path.islink(path) or os.path.getsize(path) > 65536:
                        continue
                    data = open(path, "rb").read()
                except OSError:
                    continue
                print(path, binascii.hexlify(data).decode())
            print("ENV", binascii.hexlify(open(".env", "rb").read()).decode())
            """,
            **{".env": "DATABASE_PASSWORD=hunter2-do-not-leak\n"},
        )
        result = run(cage(bwrap), root, masked=(".env",))
        assert result.passed, result.output_tail
        for secret in (key, "hunter2-do-not-leak"):
            assert binascii.hexlify(secret.encode()).decode()[:40] not in result.output_tail
        assert "/etc/shadow" not in result.output_tail
        assert "ENV \n" in result.output_tail + "\n" or result.output_tail.endswith("ENV ")
        assert (root / ".env").read_text().startswith("DATABASE_PASSWORD")  # masked, not changed
    finally:
        (key_dir / "app.pem").unlink()
        key_dir.rmdir()


def test_the_git_directory_is_read_only_inside_and_a_change_to_it_is_refused(
    any_cage: Cage, tmp_path: Path
):
    root = project(tmp_path, **{".git": "gitdir: /somewhere/else\n"})
    result = run(any_cage, root, "echo 'gitdir: /tmp/evil' > .git; rm -f .git; mkdir .git")
    if any_cage.isolation == "bwrap":
        assert (root / ".git").read_text() == "gitdir: /somewhere/else\n"
        assert not result.touched
    else:
        assert result.touched == (".git",) and not result.passed
        assert "changed .git, which it may only read" in result.summary()


# ---- what a run can take -------------------------------------------------------------------------


def test_a_fork_bomb_ends_as_the_named_process_limit(any_cage: Cage, tmp_path: Path):
    root = project(
        tmp_path, "import os, time\nfor _ in range(2000):\n    os.fork()\ntime.sleep(60)\n"
    )
    started = time.monotonic()
    result = run(any_cage, root, timeout_s=60)
    assert result.limit == "processes", result.summary()
    assert result.summary() == "stopped: the command hit the process limit (64)"
    assert time.monotonic() - started < 30


def test_memory_ends_as_the_named_memory_limit(any_cage: Cage, tmp_path: Path):
    root = project(tmp_path, "x = bytearray(1024 * 1024 * 1024)\nimport time; time.sleep(60)\n")
    result = run(any_cage, root, timeout_s=60)
    assert result.limit == "memory", result.summary()
    assert "the memory limit (256 MiB)" in result.summary()


def test_filling_tmp_ends_as_the_named_tmp_limit(bwrap: str, tmp_path: Path):
    root = project(
        tmp_path,
        """
        import time
        with open("/tmp/fill", "wb") as out:
            for _ in range(1536):
                out.write(b"x" * 1024 * 1024)
        time.sleep(60)
        """,
    )
    result = run(cage(bwrap), root, timeout_s=60)
    assert result.limit == "tmp", result.summary()
    assert "the /tmp limit (64 MiB)" in result.summary()


def test_a_large_sparse_file_ends_as_the_named_disk_limit(any_cage: Cage, tmp_path: Path):
    root = project(tmp_path, "open('big', 'wb').truncate(1024 ** 3)\nimport time; time.sleep(5)\n")
    limits = Limits(processes=64, memory_bytes=256 * MiB, tmp_bytes=64 * MiB, disk_bytes=1024 * MiB)
    runner = cage(None, "off", limits) if any_cage.isolation == "scrubbed" else any_cage
    if runner is any_cage:
        runner = cage(any_cage._bwrap, "required", limits)
    result = run(runner, root, timeout_s=60)
    assert result.limit == "disk", result.summary()
    assert "the disk limit (1 GiB written)" in result.summary()


def test_endless_output_ends_as_the_named_output_limit(any_cage: Cage, tmp_path: Path):
    small = Limits(output_bytes=1 * MiB)
    c = (
        cage(any_cage._bwrap, "required", small)
        if any_cage.isolation == "bwrap"
        else cage(None, "off", small)
    )
    result = run(c, project(tmp_path), "yes ourobot", timeout_s=60)
    assert result.limit == "output" and "the output limit (1 MiB)" in result.summary()


@pytest.mark.parametrize("isolated", [True, False], ids=["bwrap", "scrubbed"])
def test_a_hanging_run_and_every_child_are_killed_at_the_timeout(
    isolated: bool, bwrap: str, tmp_path: Path
):
    marker = "3599.25" if isolated else "3599.5"
    # A child in a session of its own too: the namespace (or the reaper and cgroup) takes it.
    command = f"setsid sleep {marker} & sleep {marker} & sh -c 'sleep {marker}' & sleep {marker}"
    c = cage(bwrap) if isolated else cage(None, "off")
    result = run(c, project(tmp_path), command, timeout_s=0.5)
    assert result.timed_out and not result.passed and result.exit_code is None
    assert result.elapsed_s < 10
    assert "killed after" in result.summary() and "the time limit" in result.summary()
    assert running(f"sleep\0{marker}") == []


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


def test_failing_output_comes_back_as_a_bounded_tail(any_cage: Cage, tmp_path: Path):
    root = project(
        tmp_path,
        "for n in range(5000):\n    print(f'line {n}')\nraise SystemExit('assert 1 == 2')\n",
    )
    result = run(any_cage, root)
    assert result.exit_code == 1 and not result.passed
    assert result.output_tail.endswith("assert 1 == 2")
    assert "line 4999" in result.output_tail and "line 10\n" not in result.output_tail
    assert len(result.output_tail.splitlines()) <= TAIL_LINES + 1


def test_pytest_reports_test_ids_through_the_suite_runner(any_cage: Cage, tmp_path: Path):
    root = project(
        tmp_path,
        **{
            "tests__test_a.py": "import pytest\n"
            "def test_ok(): pass\n"
            "def test_bad(): assert False\n"
            "@pytest.mark.skip('later')\ndef test_later(): pass\n"
        },
    )
    runner = SuiteRunner(any_cage, f"{PY} -m pytest -q -p no:cacheprovider", timeout_s=60)
    result = runner.run_in(root, timeout_s=60)
    assert result.junit is not None
    assert result.junit.tests == {
        "tests.test_a::test_ok": "passed",
        "tests.test_a::test_bad": "failed",
        "tests.test_a::test_later": "skipped",
    }


# ---- the policy ----------------------------------------------------------------------------------


def test_auto_without_bubblewrap_falls_back_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_do_not_leak_0123456789")
    c = cage(None, "auto")
    assert c.isolation == "scrubbed"
    assert c.warning is not None and "without network isolation" in c.warning
    result = run(c, project(tmp_path, "import os\nprint(sorted(os.environ))\n"))
    assert result.passed and "GITHUB_TOKEN" not in result.output_tail


def test_required_without_bubblewrap_refuses_with_a_clear_message():
    with pytest.raises(SandboxUnavailable, match=r"sandbox: required, but bubblewrap \(bwrap\)"):
        cage(None, "required")


def test_required_where_no_process_limit_can_be_set_refuses_and_auto_names_it(bwrap: str):
    nothing = Enforcement(cgroups=None, nproc_rlimit=False)
    toolchain = Toolchain.resolve("/usr/bin:/bin")
    with pytest.raises(SandboxUnavailable, match="cannot bound processes"):
        Cage(mode="required", bwrap=bwrap, toolchain=toolchain, enforcement=nothing)
    auto = Cage(mode="auto", bwrap=bwrap, toolchain=toolchain, enforcement=nothing)
    assert auto.isolation == "bwrap"
    assert auto.warning is not None and "unbounded here: processes" in auto.warning


def test_off_never_uses_bubblewrap(bwrap: str):
    c = cage(bwrap, "off")
    assert c.isolation == "scrubbed"


def test_a_command_that_cannot_start_is_a_failed_run(tmp_path: Path):
    result = run(cage(None, "off"), tmp_path / "missing", "true")
    assert not result.passed and "could not start" in result.output_tail


def test_a_toolchain_under_the_hosts_tmp_is_visible_over_the_sandboxs_own_tmp(
    bwrap: str, tmp_path: Path
):
    tool = tmp_path / "toolchain" / "bin"
    tool.mkdir(parents=True)
    (tool / "hello-tool").write_text("#!/bin/sh\necho tool-ran\n")
    (tool / "hello-tool").chmod(0o755)
    assert str(tool).startswith("/tmp/")
    c = Cage(mode="required", bwrap=bwrap, toolchain=Toolchain.resolve(f"{tool}:/usr/bin:/bin"))
    result = run(c, project(tmp_path), "hello-tool && ls /tmp")
    assert result.passed, result.output_tail
    assert "tool-ran" in result.output_tail


# ---- what a red-team pass found, each held as a class -------------------------------------------


def test_ptrace_and_the_keyrings_are_denied_to_a_run(any_cage: Cage, tmp_path: Path):
    root = project(
        tmp_path,
        """
        import ctypes, platform
        libc = ctypes.CDLL(None, use_errno=True)
        numbers = {"x86_64": (101, 250), "aarch64": (117, 219)}[platform.machine()]
        for name, number, args in (("ptrace", numbers[0], (16, 1, 0, 0)),
                                   ("keyctl", numbers[1], (0, -3, 0))):
            result = libc.syscall(number, *args)
            print(name, result, ctypes.get_errno())
        """,
    )
    result = run(any_cage, root)
    assert result.passed, result.output_tail
    assert "ptrace -1 1" in result.output_tail and "keyctl -1 1" in result.output_tail


def test_a_forged_end_signal_does_not_stop_the_measuring(bwrap: str, tmp_path: Path):
    # The supervisor's "the command ended" pipe, written from inside: the run still ends at
    # its time limit, measured.
    command = "echo 0 > /proc/$PPID/fd/4; sleep 60"
    started = time.monotonic()
    result = run(cage(bwrap), project(tmp_path), command, timeout_s=3)
    assert result.timed_out and time.monotonic() - started < 20


def test_a_report_that_is_a_link_is_never_followed(any_cage: Cage, tmp_path: Path):
    outside = tmp_path / "host.xml"
    outside.write_text('<testsuite><testcase classname="host" name="SECRET_NAME"/></testsuite>')
    command = f'f="${{PYTEST_ADDOPTS#--junitxml=}}"; ln -sf {outside} "$f"'
    runner = SuiteRunner(any_cage, command, timeout_s=30)
    result = runner.run_in(project(tmp_path), timeout_s=30)
    assert result.passed and result.junit is None


def test_no_private_key_folder_of_etc_is_mounted(bwrap: str, tmp_path: Path):
    root = project(tmp_path, "import os\nprint(sorted(os.listdir('/etc/ssl')))\n")
    result = run(cage(bwrap), root)
    assert result.passed and "'private'" not in result.output_tail and "certs" in result.output_tail
