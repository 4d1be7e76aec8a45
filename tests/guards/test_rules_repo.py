"""Each rule over real repositories (`check_repo`): the attack, its bypass attempts, and the
ordinary changes that must pass."""

from __future__ import annotations

import pytest

from app.errors import ConfigError, UserError
from app.guards import check_repo
from tests.guards.conftest import LIMITS_OFF, GitRepo, by_rule, config, lines, rules


def base_with(repo: GitRepo, files: dict[str, str]) -> str:
    repo.write("README.md", "# project\n")
    for path, content in files.items():
        repo.write(path, content)
    return repo.commit("base")


# --- deletions -------------------------------------------------------------------------------


def test_the_install_guide_rewrite_is_caught(repo: GitRepo):
    base = base_with(repo, {"INSTALL.md": lines(256, "step")})
    repo.write("INSTALL.md", lines(36, "short"))
    result = repo.check(base, repo.commit("rewrite"))
    assert by_rule(result, "deletions") == [
        (None, None, "256 lines deleted, over the limit of 200"),
        ("INSTALL.md", 1, "file shrinks from 256 to 36 lines (85%), over the 50% shrink limit"),
    ]
    assert result.stats["deleted_lines"] == 256
    assert result.stats["added_lines"] == 36


def test_gitattributes_and_textconv_cannot_hide_deletions(repo: GitRepo):
    repo.write(".gitattributes", "*.md -diff\n*.txt diff=hide\n")
    # A diff driver in the repository's own config, as a compromised checkout could have.
    repo.git("config", "diff.hide.textconv", "echo same #")
    base = base_with(repo, {"INSTALL.md": lines(256), "notes.txt": lines(300)})
    repo.write("INSTALL.md", lines(36))
    repo.write("notes.txt", "short\n")
    head = repo.commit("hide")
    numstat = repo.git("diff", "--numstat", base, head)
    assert "-\t-\tINSTALL.md" in numstat  # what a numstat-based guard would have seen
    assert repo.git("diff", base, head, "--", "notes.txt") == ""  # textconv hid the patch
    result = repo.check(base, head)
    assert result.stats["deleted_lines"] == 256 - 36 + 300
    assert {path for path, _, _ in by_rule(result, "deletions")} == {
        None,
        "INSTALL.md",
        "notes.txt",
    }


def test_a_pure_rename_is_not_a_deletion(repo: GitRepo):
    base = base_with(repo, {"docs/guide.md": lines(300)})
    repo.move("docs/guide.md", "handbook/guide.md")
    result = repo.check(base, repo.commit("move"))
    assert result.conclusion == "success", result.violations
    assert result.stats["deleted_lines"] == 0


def test_shrink_applies_from_forty_lines_and_above_the_percentage(repo: GitRepo):
    base = base_with(repo, {"small.md": lines(39), "big.md": lines(100), "ok.md": lines(100)})
    repo.write("small.md", "x\n")
    repo.write("big.md", lines(40))
    repo.write("ok.md", lines(60))
    result = repo.check(
        base,
        repo.commit("shrink"),
        config(LIMITS_OFF.replace("max_file_shrink_percent: null", "max_file_shrink_percent: 50")),
    )
    assert by_rule(result, "deletions") == [
        ("big.md", 40, "file shrinks from 100 to 40 lines (60%), over the 50% shrink limit")
    ]


def test_a_deleted_long_file_counts_as_full_shrink(repo: GitRepo):
    base = base_with(repo, {"docs/old.md": lines(50)})
    repo.remove("docs/old.md")
    result = repo.check(base, repo.commit("delete"))
    assert by_rule(result, "deletions") == [
        ("docs/old.md", None, "file of 50 lines deleted, over the 50% shrink limit")
    ]


def test_turning_text_into_binary_or_a_symlink_still_loses_its_lines(repo: GitRepo):
    base = base_with(repo, {"a.md": lines(120), "b.md": lines(120)})
    repo.write("a.md", "\0binary now\n")
    repo.symlink("b.md", "README.md")
    result = repo.check(base, repo.commit("hide"), config("guards:\n  allow_binary: true\n"))
    assert result.stats["deleted_lines"] == 240
    assert {p for p, _, _ in by_rule(result, "deletions")} == {None, "a.md", "b.md"}


def test_counts_match_git_numstat_when_no_attribute_interferes(repo: GitRepo):
    source = "".join(f"def f{n}(x):\n    return x + {n}\n\n" for n in range(300))
    base = base_with(repo, {"app/mod.py": source, "app/other.py": lines(80)})
    edited = source.splitlines(keepends=True)
    for index in (5, 200, 201, 555, 700):
        edited[index] = "    return None  # edited\n"
    del edited[400:430]
    edited.insert(10, "import os\n")
    repo.write("app/mod.py", "".join(edited))
    repo.write("app/other.py", lines(40) + "new tail\n")
    head = repo.commit("edit")
    numstat = [row.split("\t") for row in repo.git("diff", "--numstat", base, head).splitlines()]
    result = repo.check(base, head)
    assert result.stats["added_lines"] == sum(int(added) for added, _, _ in numstat)
    assert result.stats["deleted_lines"] == sum(int(deleted) for _, deleted, _ in numstat)


# --- protected-path --------------------------------------------------------------------------

WORKFLOW = "on: push\njobs: {}\n"


@pytest.mark.parametrize(
    "path",
    [
        ".github/workflows/ci.yml",
        ".GitHub/Workflows/x.yml",
        ".git\u200bhub/workflows/x.yml",
        ".github./workflows/x.yml",
        ".github /workflows/x.yml",
        "deploy/.env",
        "service/CODEOWNERS",
        "certs/server.key",
    ],
)
def test_adding_under_a_protected_pattern_or_an_alias_is_refused(repo: GitRepo, path: str):
    base = base_with(repo, {})
    repo.write(path, WORKFLOW)
    result = repo.check(base, repo.commit("add"))
    assert [(p, m.split(" (")[0]) for p, _, m in by_rule(result, "protected-path")] == [
        (path, "adds a protected path")
    ]


def test_renames_into_and_out_of_protected_paths_are_touches(repo: GitRepo):
    base = base_with(repo, {"docs/ci.yml": WORKFLOW, ".github/workflows/old.yml": WORKFLOW})
    repo.move("docs/ci.yml", ".github/workflows/ci.yml")
    repo.move(".github/workflows/old.yml", "docs/old.yml")
    result = repo.check(base, repo.commit("renames"))
    found = {(p, m.split(" (")[0]) for p, _, m in by_rule(result, "protected-path")}
    assert found == {
        (".github/workflows/ci.yml", "renames onto a protected path"),
        (".github/workflows/old.yml", "renames away from a protected path"),
    }


def test_a_mode_change_on_a_protected_file_is_a_touch(repo: GitRepo):
    base = base_with(repo, {".github/workflows/ci.yml": WORKFLOW})
    (repo.path / ".github/workflows/ci.yml").chmod(0o755)
    result = repo.check(base, repo.commit("chmod"))
    assert by_rule(result, "protected-path") == [
        (
            ".github/workflows/ci.yml",
            None,
            "changes the mode (100644 -> 100755) of a protected path "
            "(pattern '.github/workflows/**')",
        )
    ]


def test_deleting_a_protected_file_is_a_touch(repo: GitRepo):
    base = base_with(repo, {"CODEOWNERS": "* @owner\n"})
    repo.remove("CODEOWNERS")
    result = repo.check(base, repo.commit("rm"))
    assert [m.split(" (")[0] for _, _, m in by_rule(result, "protected-path")] == [
        "deletes a protected path"
    ]


def test_the_config_comes_from_the_base_so_a_pr_cannot_relax_its_own_gates(repo: GitRepo):
    base = base_with(repo, {"INSTALL.md": lines(300)})
    repo.write(".github/ourobot.yml", "version: 1\n" + LIMITS_OFF + "  protected_paths: []\n")
    repo.write("INSTALL.md", "gone\n")
    result = check_repo(repo.path, base, repo.commit("relax"))
    assert {"deletions", "protected-path"} <= rules(result)
    assert result.stats["config"].startswith("defaults")


def test_a_replacement_list_keeps_the_governance_surface_in_advanced_mode(repo: GitRepo):
    repo.write(".github/ourobot.yml", 'version: 1\nguards:\n  protected_paths: ["docs/**"]\n')
    base = base_with(repo, {})
    repo.write(".github/workflows/ci.yml", WORKFLOW)
    repo.write(".env", "DEBUG=1\n")
    repo.write("docs/x.md", "x\n")
    result = check_repo(repo.path, base, repo.commit("touch"))
    assert {p for p, _, _ in by_rule(result, "protected-path")} == {
        ".github/workflows/ci.yml",
        "docs/x.md",
    }
    assert result.stats["config"] == f".github/ourobot.yml@{base[:12]}"


def test_ordinary_names_near_protected_ones_pass(repo: GitRepo):
    base = base_with(repo, {})
    repo.write("app/secrets.py", "import secrets\n\ntoken = secrets.token_hex(32)\n")
    repo.write("docs/config.md", "Put your keys in a `.env` file; never commit `.env`.\n")
    repo.write("app/env.py", "ENV_FILE = '.env'\n")
    repo.write(".github/ISSUE_TEMPLATE/bug.md", "---\nname: Bug\n---\n")
    result = repo.check(base, repo.commit("ordinary"))
    assert result.conclusion == "success", result.violations


def test_an_invalid_config_at_the_base_is_a_config_error(repo: GitRepo):
    repo.write(".github/ourobot.yml", "version: 1\nguards:\n  max_delete_lines: 3\n")
    base = base_with(repo, {})
    with pytest.raises(ConfigError, match="max_delete_lines"):
        check_repo(repo.path, base, base)


def test_a_symlinked_config_is_refused(repo: GitRepo):
    repo.symlink(".github/ourobot.yml", "../elsewhere.yml")
    base = base_with(repo, {"elsewhere.yml": "version: 1\n"})
    with pytest.raises(ConfigError, match="not a regular file"):
        check_repo(repo.path, base, base)


def test_unknown_revisions_and_non_repositories_are_bad_input(repo: GitRepo, tmp_path):
    base = base_with(repo, {})
    with pytest.raises(UserError, match="unknown revision 'nope'"):
        check_repo(repo.path, base, "nope")
    with pytest.raises(UserError, match="invalid revision"):
        check_repo(repo.path, "--output=/tmp/x", base)
    (tmp_path / "plain").mkdir()
    with pytest.raises(UserError, match="not a git repository"):
        check_repo(tmp_path / "plain", "HEAD", "HEAD")


# --- unsafe-path (trees git's own index refuses, built from raw objects) ------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (".GIT", "'.git' component"),
        ("a\\b", "backslash"),
        ("evil\x1b]0;title\x07", "control character"),
        ("\u202etxt.exe", "invisible Unicode character"),
        ("git~1", "'.git' component"),
    ],
)
def test_crafted_tree_entries_are_unsafe(repo: GitRepo, name: str, reason: str):
    base = base_with(repo, {})
    blob = repo.blob("payload\n")
    readme = repo.git("rev-parse", f"{base}:README.md")
    head = repo.commit_tree(
        [("100644", "blob", readme, "README.md"), ("100644", "blob", blob, name)], base
    )
    found = by_rule(repo.check(base, head), "unsafe-path")
    assert len(found) == 1
    assert found[0][0] == name
    assert reason in found[0][2]


# --- symlink ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("link", "target", "problem"),
    [
        ("docs/wf", "../.github/workflows", "points into a protected path"),
        ("docs/ci", "../.github/workflows/ci.yml", "points into a protected path"),
        ("docs/gh", "../.GitHub", "points into a protected path"),
        ("passwd", "../../etc/passwd", "resolves outside the repository"),
        ("abs", "/etc/passwd", "absolute path outside the repository"),
        ("hooks", ".git/hooks", "points into .git"),
        ("root", ".", "points at the repository root"),
    ],
)
def test_symlinks_out_of_the_repo_or_into_protected_paths(
    repo: GitRepo, link: str, target: str, problem: str
):
    base = base_with(repo, {".github/workflows/ci.yml": WORKFLOW})
    repo.symlink(link, target)
    found = by_rule(repo.check(base, repo.commit("link")), "symlink")
    assert len(found) == 1
    assert found[0][0] == link
    assert problem in found[0][2]


def test_a_chain_of_links_is_followed(repo: GitRepo):
    base = base_with(repo, {".github/workflows/ci.yml": WORKFLOW})
    repo.symlink("hop", ".github")
    repo.symlink("docs/innocent", "../hop/workflows")
    found = by_rule(repo.check(base, repo.commit("chain")), "symlink")
    assert [p for p, _, _ in found] == ["docs/innocent", "hop"]


def test_a_chain_through_a_base_link_that_differs_only_in_case_is_followed(repo: GitRepo):
    # On a case-insensitive checkout `hop/` is the base's link `Hop`, which leads into .github.
    repo.write(".github/workflows/ci.yml", WORKFLOW)
    repo.symlink("Hop", ".github")
    base = repo.commit("base")
    repo.symlink("docs/innocent", "../hop/workflows/ci.yml")
    found = by_rule(repo.check(base, repo.commit("chain")), "symlink")
    assert [p for p, _, _ in found] == ["docs/innocent"]
    assert "points into a protected path" in found[0][2]


def test_a_link_named_like_another_only_in_case_is_not_taken_for_it(repo: GitRepo):
    base = base_with(repo, {"docs/guide.md": "guide\n"})
    repo.symlink("Guide", "docs/guide.md")
    repo.symlink("docs/readme", "../guide")  # no such path, and `Guide` is a harmless link
    assert by_rule(repo.check(base, repo.commit("links")), "symlink") == []


def test_an_in_repo_symlink_passes(repo: GitRepo):
    base = base_with(repo, {"docs/guide.md": "guide\n"})
    repo.symlink("GUIDE.md", "docs/guide.md")
    repo.symlink("docs/readme", "../README.md")
    result = repo.check(base, repo.commit("links"))
    assert result.conclusion == "success", result.violations


# --- submodule, binary, size -----------------------------------------------------------------


def test_gitlinks_and_gitmodules_are_submodule_changes(repo: GitRepo):
    base = base_with(repo, {})
    repo.write(
        ".gitmodules", '[submodule "lib"]\n\tpath = lib\n\turl = https://example.invalid/x\n'
    )
    repo.git("add", ".gitmodules")
    repo.gitlink("lib")
    result = repo.check(base, repo.commit("submodule", stage_all=False))
    assert by_rule(result, "submodule") == [
        (".gitmodules", None, ".gitmodules added"),
        ("lib", None, "submodule (gitlink) added"),
    ]
    assert ".gitmodules" in {p for p, _, _ in by_rule(result, "protected-path")}


def test_binary_additions_fail_unless_allowed(repo: GitRepo):
    base = base_with(repo, {"old.bin": "\0\1\2"})
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0")
    repo.remove("old.bin")
    head = repo.commit("binary")
    assert by_rule(repo.check(base, head), "binary") == [
        ("logo.png", None, "binary file added (allow_binary is off)")
    ]
    allowed = repo.check(base, head, config("guards:\n  allow_binary: true\n"))
    assert allowed.conclusion == "success"


def test_size_limits_and_an_unevaluable_diff_fail(repo: GitRepo):
    base = base_with(repo, {})
    for number in range(3):
        repo.write(f"f{number}.txt", lines(10))
    head = repo.commit("files")
    limits = "guards:\n  max_changed_files: 2\n  max_added_lines: 20\n  max_diff_bytes: 100\n"
    messages = {m for _, _, m in by_rule(repo.check(base, head, config(limits)), "size")}
    assert messages == {
        "3 files changed, over the limit of 2",
        "30 lines added, over the limit of 20",
        "213 bytes of diff (too large to evaluate), over the limit of 100",
    }
    unevaluable = check_repo(repo.path, base, head, config(LIMITS_OFF), load_limit=50)
    assert unevaluable.conclusion == "failure"
    assert "cannot be evaluated" in by_rule(unevaluable, "size")[0][2]
    assert unevaluable.stats["evaluable"] is False


def test_rules_switched_off_by_config_do_not_run(repo: GitRepo):
    base = base_with(repo, {"tests/test_a.py": "def test_a():\n    pass\n"})
    repo.remove("tests/test_a.py")
    repo.write("k.txt", 'api_key = "Zq8rT2mW9xLp4sNv7bYc"\n')
    head = repo.commit("off")
    result = repo.check(base, head, config("guards:\n  secrets: false\n  test_tamper: false\n"))
    assert result.conclusion == "success"
    assert result.stats["rules_off"] == ["secret", "test-tamper"]


def test_commits_that_landed_on_the_base_since_the_pr_branched_are_not_its_changes(
    repo: GitRepo,
):
    start = base_with(repo, {})
    repo.git("checkout", "-q", "-b", "ourobot/issue-3")
    repo.write("docs/new.md", "new\n")
    head = repo.commit("pr")
    repo.git("checkout", "-q", "main")
    repo.write("big.md", lines(400))
    main = repo.commit("main moved on")
    result = repo.check(main, head)
    assert result.conclusion == "success", result.violations
    assert (result.stats["base"], result.stats["merge_base"]) == (main, start)
    assert result.stats["files"] == 1
    assert f"merge base `{start[:12]}`" in result.summary_markdown()
