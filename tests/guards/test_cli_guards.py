"""The real `ourobot guards check` console script on real repositories: exit codes 0/1/2, the
`--json` document exactly as DESIGN §3 writes it, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from app.guards import RULE_IDS
from tests.guards.conftest import OUROBOT, GitRepo, lines

pytestmark = pytest.mark.slow


def ourobot(*args: str, stdin: bytes | None = None, cwd: Path | None = None):
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(cwd or Path.cwd())}
    return subprocess.run(
        [str(OUROBOT), *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=60,
    )


@pytest.fixture
def commits(repo: GitRepo) -> tuple[GitRepo, str, str, str]:
    """base -> clean (adds a doc) -> bad (also rewrites INSTALL.md and adds a workflow)."""
    repo.write("INSTALL.md", lines(256, "step"))
    base = repo.commit("base")
    repo.write("docs/usage.md", "Use it.\n")
    clean = repo.commit("clean")
    repo.write("INSTALL.md", lines(36))
    repo.write(".github/workflows/x.yml", "on: push\n")
    bad = repo.commit("bad")
    return repo, base, clean, bad


def assert_schema(document: dict) -> None:
    assert set(document) == {"conclusion", "violations", "stats"}
    assert document["conclusion"] in ("success", "failure")
    assert isinstance(document["stats"], dict)
    for violation in document["violations"]:
        assert set(violation) == {"rule", "path", "line", "message"}
        assert violation["rule"] in RULE_IDS
        assert violation["path"] is None or isinstance(violation["path"], str)
        assert violation["line"] is None or isinstance(violation["line"], int)
        assert isinstance(violation["message"], str)
    assert (document["conclusion"] == "failure") == bool(document["violations"])


def test_a_clean_change_exits_0_with_the_json_document(commits, tmp_path):
    repo, base, clean, _ = commits
    proc = ourobot(
        "guards",
        "check",
        "--repo",
        str(repo.path),
        "--base",
        base,
        "--head",
        clean,
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert_schema(document)
    assert document["conclusion"] == "success"
    assert document["stats"]["base"] == base
    assert document["stats"]["head"] == clean
    assert proc.stderr == b""


def test_violations_exit_1_with_each_rule_and_path(commits, tmp_path):
    repo, base, _, bad = commits
    proc = ourobot(
        "guards",
        "check",
        "--repo",
        str(repo.path),
        "--base",
        base,
        "--head",
        bad,
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    assert_schema(document)
    found = {(v["rule"], v["path"]) for v in document["violations"]}
    assert found == {
        ("deletions", None),
        ("deletions", "INSTALL.md"),
        ("protected-path", ".github/workflows/x.yml"),
    }


def test_the_text_table_is_readable(commits, tmp_path):
    repo, base, _, bad = commits
    proc = ourobot("guards", "check", "--repo", str(repo.path), "--base", base, "--head", bad)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert out.startswith("ourobot guards: failure (3 violations)\n")
    assert "RULE" in out and "WHERE" in out and "MESSAGE" in out
    assert "INSTALL.md:1" in out
    assert "(whole change)" in out


def test_a_diff_from_a_file_or_stdin_gives_the_same_verdict(commits, tmp_path):
    repo, base, _, bad = commits
    patch = subprocess.run(
        ["git", "diff", base, bad], cwd=repo.path, env=repo.env, capture_output=True, check=True
    ).stdout
    (tmp_path / "change.diff").write_bytes(patch)
    from_file = ourobot("guards", "check", "--diff", str(tmp_path / "change.diff"), "--json")
    from_stdin = ourobot("guards", "check", "--diff", "-", "--json", stdin=patch)
    assert from_file.returncode == from_stdin.returncode == 1
    assert json.loads(from_file.stdout)["violations"] == json.loads(from_stdin.stdout)["violations"]


def test_a_config_file_replaces_the_base_config(commits, tmp_path):
    repo, base, _, bad = commits
    (tmp_path / "lenient.yml").write_text(
        "version: 1\nmode: light\nguards:\n  max_deleted_lines: null\n"
        "  max_file_shrink_percent: null\n  protected_paths: []\n"
    )
    proc = ourobot(
        "guards",
        "check",
        "--repo",
        str(repo.path),
        "--base",
        base,
        "--head",
        bad,
        "--config",
        str(tmp_path / "lenient.yml"),
        "--json",
    )
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["stats"]["config"] == str(tmp_path / "lenient.yml")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "BASE", "--head", "no-such-rev"], "unknown revision 'no-such-rev'"),
        (["--base", "BASE"], "--repo needs both --base REV and --head REV"),
        (["--base", "BASE", "--head", "BASE", "--config", "CONFIG"], "max_delete_lines"),
        (["--base", "BASE", "--head", "BASE", "--config", "MISSING"], "not found"),
    ],
)
def test_bad_input_exits_2_with_one_line(commits, tmp_path, args, message):
    repo, base, _, _ = commits
    (tmp_path / "bad.yml").write_text("version: 1\nguards:\n  max_delete_lines: 3\n")
    replaced = [
        {
            "BASE": base,
            "CONFIG": str(tmp_path / "bad.yml"),
            "MISSING": str(tmp_path / "no.yml"),
        }.get(a, a)
        for a in args
    ]
    proc = ourobot("guards", "check", "--repo", str(repo.path), *replaced, "--json")
    assert proc.returncode == 2
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert err.count("\n") == 1, err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["--diff", "-"], b"not a diff at all\n", "unreadable diff"),
        (["--diff", "/nonexistent/x.diff"], None, "cannot read diff"),
        (["--diff", "-", "--base", "HEAD"], b"", "--base and --head go with --repo"),
        (["--repo", "/nonexistent", "--base", "a", "--head", "b"], None, "not a directory"),
        ([], None, "one of the arguments --repo --diff is required"),
    ],
)
def test_bad_diff_input_exits_2_with_one_line(args, stdin, message):
    proc = ourobot("guards", "check", *args, stdin=stdin)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1, err
    assert message in err


def test_hostile_paths_are_escaped_in_the_text_output(tmp_path):
    diff = (
        'diff --git "a/x\\033[2J.txt" "b/x\\033[2J.txt"\n'
        "new file mode 100644\n--- /dev/null\n"
        '+++ "b/x\\033[2J.txt"\n@@ -0,0 +1 @@\n+hi\n'
    )
    proc = ourobot("guards", "check", "--diff", "-", stdin=diff.encode())
    assert proc.returncode == 1
    assert b"\x1b" not in proc.stdout
    assert b"x\\u001b[2J.txt" in proc.stdout


@pytest.mark.parametrize("mode", ["advanced", "pro"])
@pytest.mark.parametrize(
    "path", [".github/ourobot/CONSTITUTION.md", ".github/ourobot/prompts/reviewer.md"]
)
def test_the_governance_surface_stays_protected_when_the_config_protects_nothing(
    repo, tmp_path, mode, path
):
    # The standard a PR is judged by: `protected_paths: []` cannot unprotect it. In pro mode
    # the guards still flag it, and the gate asks an admin (docs/gate.md, owner-approval).
    repo.write(".github/ourobot/CONSTITUTION.md", "Every function has a docstring.\n")
    base = repo.commit("base")
    repo.write(path, "Anything goes.\n")
    head = repo.commit("relax the standard")
    config = tmp_path / "ourobot.yml"
    config.write_text(f"version: 1\nmode: {mode}\nguards:\n  protected_paths: []\n")
    args = ["--repo", str(repo.path), "--base", base, "--head", head, "--config", str(config)]
    proc = ourobot("guards", "check", *args, "--json")
    assert proc.returncode == 1, proc.stderr
    [violation] = json.loads(proc.stdout)["violations"]
    assert (violation["rule"], violation["path"]) == ("protected-path", path)
    assert ".github/ourobot/**" in violation["message"]
