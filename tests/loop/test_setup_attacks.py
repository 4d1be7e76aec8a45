"""Red team, pass 2: the setup phase. Each test is one attack, measured from outside (a value the
model or a test was shown, a marker on the host, the setup cache's contents)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewers.fake_servers import Text
from tests.loop.conftest import IMPLEMENTER, PYTEST, Loop

pytestmark = pytest.mark.slow

HOST_SECRET = "HOST-ONLY-PRIVATE-KEY-7f3a9c"


def bash(command: str) -> Text:
    return Text(f"Let me look.\n\n```bash\n{command}\n```\n")


def host_secret(tmp_path: Path) -> Path:
    """A folder on the host that no run may see (as /etc/ourobot is in a deployment)."""
    folder = tmp_path / "etc-ourobot"
    folder.mkdir()
    (folder / "app-key.pem").write_text(HOST_SECRET + "\n")
    return folder


# ---- R2-S1: a setup output that is a symlink is resolved on the host by bubblewrap ---------------


def test_a_setup_symlink_never_shows_a_host_file_to_later_runs(
    loop: Loop, bwrap: str, tinyproxy: str, tmp_path: Path
):
    secret = host_secret(tmp_path)
    # Absolute to a host folder, and relative up to the data directory that holds the cache.
    setup = f"ln -s {secret} leak && ln -s ../../../.. datadir"
    loop.project(
        command=PYTEST,
        extra_config=f"setup: {{command: '{setup}', network: []}}\n",
        files={"tests/test_leak.py": (
            "import pathlib\n\n\ndef test_leak():\n"
            "    p = pathlib.Path('leak/app-key.pem')\n"
            "    print('TESTSAW', p.read_text() if p.exists() else 'nothing')\n"
        )},
    )  # fmt: skip
    loop.models.script(
        IMPLEMENTER,
        bash("cat leak/app-key.pem; ls datadir; ls datadir/setup-cache"),
        Text("ALREADY SATISFIED"),
    )
    result = loop.run("Nothing to do.")
    prompts = "\n".join(loop.prompts())
    assert HOST_SECRET not in prompts, "the model's command read a host file through setup's link"
    assert "setup-cache" not in prompts.split("Let me look.")[-1], "the data directory was shown"
    # Fail closed and say why, before any model call.
    assert result.outcome == "blocked" and result.error_class == "setup", result.reason
    assert "left a link at datadir, leak" in result.reason
    assert loop.models.requests_for(IMPLEMENTER) == []


def test_a_cached_link_and_an_overlay_link_are_never_bound(bwrap: str, tmp_path: Path):
    """Defence in depth: an entry stored before links were refused is set up again, and the
    cage never binds an overlay whose source is a link."""
    from app.workspace.cage.entry import Cage, CageJob
    from app.workspace.setup_cache import SetupCache

    secret = host_secret(tmp_path)
    cache = SetupCache(tmp_path / "data", "o/r", 10**9)
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    (outputs / "leak").symlink_to(secret)
    stored = cache.store("k" * 24, {"leak": outputs / "leak"})
    assert cache.lookup("k" * 24) is None
    project = tmp_path / "project"
    project.mkdir()
    run = Cage.for_host("required").run(CageJob(
        "cat leak/app-key.pem; ls leak", project, timeout_s=30, overlays=tuple(stored),
    ))  # fmt: skip
    assert HOST_SECRET not in run.output_tail


# ---- R2-S3: the mount-point stub a command's run leaves is removed through a link on the host ----


def test_removing_an_overlay_stub_never_follows_a_link_out_of_the_worktree(
    loop: Loop, bwrap: str, tinyproxy: str, tmp_path: Path
):
    # setup writes a file inside a tracked folder (a generated _version.py): its overlay's mount
    # point is a stub in the worktree, removed after each command. The command swaps the
    # tracked folder for a link to a host folder holding an empty file of the same name.
    victim = tmp_path / "victim"
    (victim / "pkg").mkdir(parents=True)
    (victim / "pkg" / "_version.py").write_text("")
    (victim / "pkg" / "empty-dir-marker").mkdir()
    setup = "echo VERSION=1 > src/pkg/_version.py"
    loop.project(
        command=PYTEST,
        extra_config=f"setup: {{command: '{setup}', network: []}}\n",
        files={"src/pkg/__init__.py": "", "src/pkg/mod.py": "X = 1\n"},
    )
    loop.models.script(
        IMPLEMENTER,
        bash(f"cat src/pkg/_version.py; mv src src_old && ln -s {victim} src && echo swapped"),
        Text("ALREADY SATISFIED"),
    )
    loop.run("Nothing to do.")
    told = loop.prompts()[1]
    assert "swapped" in told or "VERSION" in told, told[-800:]
    assert (victim / "pkg" / "_version.py").exists(), "the harness deleted a host file"


# ---- R2-S4: a daemon started by setup; setup's outputs written by a later command ----


def test_a_setup_daemon_dies_and_setup_outputs_stay_read_only(
    loop: Loop, bwrap: str, tinyproxy: str, tmp_path: Path
):
    setup = (
        "mkdir -p .deps && echo clean > .deps/mod.py && "
        '(setsid sh -c "sleep 4245.5; echo late > .deps/late" >/dev/null 2>&1 &) && '
        "(nohup sleep 4246.5 >/dev/null 2>&1 &) && echo set up"
    )
    loop.project(command=PYTEST, extra_config=f"setup: {{command: '{setup}', network: []}}\n")
    poison = "echo POISON > .deps/mod.py; touch .deps/new; rm -rf .deps; ls -la .deps; exit 0"
    loop.models.script(IMPLEMENTER, bash(poison), Text("ALREADY SATISFIED"))
    loop.run("Nothing to do.")
    import subprocess

    left = subprocess.run(["pgrep", "-af", "sleep 424[56].5"], capture_output=True, text=True)
    assert [line for line in left.stdout.splitlines() if "pgrep" not in line] == []
    # The cache entry (shown to the next ticket) is as setup left it.
    entries = list((loop.settings.data_dir / "setup-cache").glob("*/*/files/.deps/mod.py"))
    assert [p.read_text() for p in entries] == ["clean\n"]
    assert not any((loop.settings.data_dir / "setup-cache").glob("*/*/files/.deps/new"))
    told = loop.prompts()[1]
    assert "Read-only file system" in told, told[-600:]


# ---- R2-S5: two repositories whose names fold to the same cache folder ----


def test_two_repositories_never_share_a_setup_cache(tmp_path: Path):
    from app.workspace.setup_cache import SetupCache

    # GitHub names can hold '_' (repositories; Enterprise Managed Users' logins: alice_acme).
    one = SetupCache(tmp_path, "alice_acme/tools", 10**9)
    other = SetupCache(tmp_path, "alice/acme_tools", 10**9)
    assert one.root != other.root
