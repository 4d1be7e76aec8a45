"""`review.context: max`: the scope reviewer over a whole-repository map, end to end through
`ourobot review check` (real git, the real SDKs, the fake model servers)."""

from __future__ import annotations

import json

import pytest

import app.cli as cli
from reviewers.connectivity import ImportGraph
from reviewers.fake_servers import FakeModels, Text
from reviewers.git_source import read_change
from reviewers.repo_map import coupling, is_prompt_file, read_repo_map
from tests.jobs.review_check.conftest import (
    CANARY_FILE,
    DIVIDE,
    rw,  # noqa: F401  (the review-job world fixture)
)
from tests.jobs.review_check.conftest import CONFIG as JOB_CONFIG

pytestmark = pytest.mark.slow

A, B = "anthropic:claude-a", "openai:gpt-b"
APPROVE = Text("VERDICT: APPROVE")
SCOPE_MARK = "You are the scope reviewer"
CANARY = "canary-readme-secret-4be1d9a0"
GOAL = "Stats for people who count things carefully."
CONFIG = (
    f"version: 1\nreview:\n  models: [{A}, {B}]\n  quorum: 2\n  timeout_s: 20\n"
    "  context: {context}\n"
)


@pytest.fixture(autouse=True)
def review_command(monkeypatch):
    if "app.cli.review_cmd" not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "app.cli.review_cmd"))


def make_change(repo, context: str):
    repo.commit(
        {
            ".github/ourobot.yml": CONFIG.format(context=context),
            ".github/ourobot/CONSTITUTION.md": "Never log personal data.\n",
            "README.md": f"# stats\n\n{GOAL}\nDeploy key: {CANARY}\n",
            "app/stats.py": "def mean(xs):\n    return sum(xs)\n",
            "app/report.py": "from app.stats import mean\n",
            "docs/far_away.md": "unrelated\n",
            "prompts/writer.md": "Write.\n",
        }
    )
    repo.branch("feature")
    repo.commit({"app/stats.py": "def mean(xs):\n    return sum(xs) / len(xs)\n"})
    return repo


def check(capsys, monkeypatch, repo, *extra):
    monkeypatch.setenv("README_DEPLOY_KEY", CANARY)  # a secret the environment knows
    code = cli.main(
        ["review", "check", "--repo", str(repo.path), "--base", "main", "--head", "feature", *extra]
    )
    out, err = capsys.readouterr()
    return code, out, err


def scope_requests(models: FakeModels) -> list[str]:
    return [r.prompt_text for r in models.requests if SCOPE_MARK in r.prompt_text]


def test_max_with_all_approving_passes_and_the_scope_reviewer_sees_the_map(
    fake_models_env, repo, capsys, monkeypatch
):
    make_change(repo, "max")
    fake_models_env.script(A, APPROVE, Text("In scope.\nVERDICT: APPROVE"))
    fake_models_env.script(B, APPROVE)
    code, out, _ = check(capsys, monkeypatch, repo, "--json")
    assert code == 0
    # The JSON contract is unchanged: the scope review is not a panel verdict.
    assert json.loads(out) == {
        "conclusion": "success",
        "reason": "approved",
        "verdicts": [
            {"model": A, "verdict": "approve", "findings": []},
            {"model": B, "verdict": "approve", "findings": []},
        ],
    }
    [scope] = scope_requests(fake_models_env)
    assert len(fake_models_env.requests_for(A)) == 2  # the first model is the scope reviewer
    assert "docs/far_away.md" in scope  # a file outside the diff
    assert GOAL in scope
    assert "prompts/writer.md" in scope
    assert "app/stats.py: 1 import link(s); most connected: app/report.py" in scope
    assert "<<<BEGIN UNTRUSTED tree " in scope
    assert CANARY not in scope
    assert all(CANARY not in r.prompt_text for r in fake_models_env.requests)


def test_max_summary_shows_the_scope_row(fake_models_env, repo, capsys, monkeypatch):
    make_change(repo, "max")
    fake_models_env.script(A, APPROVE, APPROVE)
    fake_models_env.script(B, APPROVE)
    code, out, _ = check(capsys, monkeypatch, repo)
    assert code == 0
    assert "Scope review: approve (0 finding(s) by anthropic:claude-a)." in out


def test_max_scope_reject_fails_rejected_with_its_finding(
    fake_models_env, repo, capsys, monkeypatch
):
    make_change(repo, "max")
    finding = "FINDING major app/stats.py:1 couples a hub to reporting; move it"
    fake_models_env.script(A, APPROVE, Text(f"{finding}\nVERDICT: REJECT"))
    fake_models_env.script(B, APPROVE)
    code, out, _ = check(capsys, monkeypatch, repo)
    assert code == 1
    assert out.startswith("## ourobot review failed (rejected)")
    assert "The scope reviewer rejected the change." in out
    assert "Scope review: reject" in out
    assert "(anthropic:claude-a (scope)): couples a hub to reporting; move it" in out


def test_max_scope_garbage_fails_incomplete(fake_models_env, repo, capsys, monkeypatch):
    make_change(repo, "max")
    fake_models_env.script(A, APPROVE, Text("Sure, all fine by me"))
    fake_models_env.script(B, APPROVE)
    code, out, _ = check(capsys, monkeypatch, repo, "--json")
    assert code == 1
    result = json.loads(out)
    assert (result["conclusion"], result["reason"]) == ("failure", "incomplete")
    assert [v["verdict"] for v in result["verdicts"]] == ["approve", "approve"]


def test_max_scope_not_asked_when_the_panel_already_failed(
    fake_models_env, repo, capsys, monkeypatch
):
    make_change(repo, "max")
    fake_models_env.script(A, Text("FINDING minor app/stats.py:2 empty list\nVERDICT: REJECT"))
    fake_models_env.script(B, APPROVE)
    code, out, _ = check(capsys, monkeypatch, repo)
    assert code == 1
    assert scope_requests(fake_models_env) == []
    assert "Scope review: skipped (not asked: the panel failed without it)." in out


def test_low_records_skipped_and_sends_no_scope_request(fake_models_env, repo, capsys, monkeypatch):
    make_change(repo, "low")
    fake_models_env.script(A, APPROVE)
    fake_models_env.script(B, APPROVE)
    code, out, _ = check(capsys, monkeypatch, repo)
    assert code == 0
    assert "Scope review: skipped (review.context is low)." in out
    assert scope_requests(fake_models_env) == []
    assert len(fake_models_env.requests) == 2


def test_the_tree_is_bounded_with_an_omitted_count(repo):
    repo.commit({f"pkg/module_{n:03}.py": "x = 1\n" for n in range(300)})
    repo.branch("feature")
    repo.commit({"pkg/module_000.py": "x = 2\n"})
    change = read_change(repo.path, "main", "feature")
    repo_map = read_repo_map(repo.path, change, max_chars=4000)
    assert 0 < repo_map.tree_omitted < 300
    assert f"... {repo_map.tree_omitted} more file(s) omitted" in repo_map.tree
    assert len(repo_map.tree) < 2500
    assert repo_map.readme is None and repo_map.constitution is None


def test_the_scope_reviewer_gets_the_whole_constitution_and_the_tree_gives_way(repo):
    # 200 numbered rules (~7,000 characters), far past the old 40-line opening.
    rules = "".join(f"{n}. Rule number {n} of this project holds.\n" for n in range(1, 201))
    files = {f"pkg/module_{n:03}.py": "x = 1\n" for n in range(300)}
    repo.commit({**files, ".github/ourobot/CONSTITUTION.md": rules})
    repo.branch("feature")
    repo.commit({"pkg/module_000.py": "x = 2\n"})
    change = read_change(repo.path, "main", "feature")
    roomy = read_repo_map(repo.path, change, max_chars=30_000)
    tight = read_repo_map(repo.path, change, max_chars=9_000)
    for repo_map in (roomy, tight):
        assert repo_map.constitution == rules  # whole, never cut to fit
    assert roomy.tree_omitted == 0
    assert tight.tree_omitted > 0  # everything else shrinks first
    assert len(tight.tree) < len(roomy.tree)


def test_coupling_names_hubs_first_and_is_bounded():
    graph = ImportGraph()
    for n in range(4):
        graph.add("hub.py", f"leaf{n}.py")
    graph.add("leaf0.py", "other.py")
    text = coupling(["leaf0.py", "hub.py"], graph, 10_000)
    assert text.splitlines()[0].startswith("hub.py: 4 import link(s); most connected: leaf0.py")
    assert "hub.py (4 links, changed)" in text
    assert "more changed file(s) omitted" in coupling(["leaf0.py", "hub.py"], graph, 10)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("prompts/reviewer.md", True),
        ("pkg/prompts/x.md", True),
        (".github/ourobot/prompts/reviewer.md", True),
        (".github/ourobot/CONSTITUTION.md", True),
        (".github/ourobot.yml", True),
        ("prompts/__init__.py", False),
        ("docs/prompts.md", False),
    ],
)
def test_prompt_and_governance_files(path, expected):
    assert is_prompt_file(path) is expected


# ---- the review check job (webhook -> job -> sandbox check run) ------------------------------

OPS = "calc/ops.py"
NEW_OPS = "def add(a: int, b: int) -> int:\n    return a + b\n" + DIVIDE


def test_job_with_context_max_publishes_the_scope_row_and_ledger_verdict(rw):  # noqa: F811
    config = JOB_CONFIG.replace("  timeout_s: 20\n", "  timeout_s: 20\n  context: max\n")
    rw.push("main", {".github/ourobot.yml": config}, start="origin/main")
    scope_answer = Text("FINDING major calc/ops.py:4 not what the ticket asks\nVERDICT: REJECT")
    rw.models.script(A, APPROVE, scope_answer)
    rw.models.script(B, APPROVE)
    _, head, payload = rw.open_pull({OPS: NEW_OPS})
    rw.run(rw.jobs_for(payload)[0])
    [run] = rw.check_runs(head)
    assert (run.status, run.conclusion) == ("completed", "failure")
    assert "Scope review: reject" in run.output.summary
    [scope] = rw.ledger.entries(kind="scope-review")
    assert scope.outcome.review == "rejected"
    [text] = scope_requests(rw.models)
    assert "calc/settings.py" in text and "README.md" in text  # the tree, beyond the diff
    assert CANARY_FILE not in text and "s3cret-webhook-value" not in text
