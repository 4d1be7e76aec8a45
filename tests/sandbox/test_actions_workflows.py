"""GitHub Actions as the sandbox plays it: a workflow dispatched by the App, checked as GitHub
checks it, a run with its own GITHUB_TOKEN, the runner stand-in running a command for it."""

from __future__ import annotations

import json
import sys
import textwrap

import httpx
import pytest
from githubkit.exception import RequestFailed

from tests.plugins.sandbox import SandboxHandle

pytestmark = pytest.mark.slow

WORKFLOW = textwrap.dedent(
    """\
    name: ourobot implement
    on:
      workflow_dispatch:
        inputs:
          ticket: {description: the issue, required: true, type: number}
          run_key: {description: the run, required: true, type: string}
          mode: {required: false, type: choice, options: [fast, slow], default: fast}
    permissions:
      contents: write
      checks: write
    jobs:
      implement:
        runs-on: ubuntu-latest
        steps:
          - run: echo hello
    """
)
FILES = {
    "README.md": "# demo\n",
    ".github/workflows/ourobot-implement.yml": WORKFLOW,
    ".github/workflows/ci.yml": "on: [push]\njobs: {t: {runs-on: x, steps: [{run: 'true'}]}}\n",
}
URL = "/repos/octo/demo/actions/workflows/{workflow}/dispatches"


@pytest.fixture
def repo(sandbox: SandboxHandle):
    made = sandbox.create_repo(files=FILES)
    sandbox.control.set_app_permissions(
        {"actions": "write", "contents": "write", "checks": "write", "issues": "write"}
    )
    return made


def dispatch(sandbox: SandboxHandle, token: str, workflow: str, body: dict, **headers: str):
    return httpx.post(
        sandbox.url + URL.format(workflow=workflow),
        json=body,
        headers={"Authorization": f"token {token}", **headers},
        timeout=10,
    )


def test_a_dispatch_starts_a_run_with_the_inputs_as_strings(sandbox: SandboxHandle, repo):
    bot = sandbox.github_installation(repo.installation_id)
    answer = bot.rest.actions.create_workflow_dispatch(
        "octo", "demo", "ourobot-implement.yml", ref="main", inputs={"ticket": 7, "run_key": "k"}
    )
    assert answer.status_code == 200  # githubkit asks for 2026-03-10: the run comes back
    run_id = answer.parsed_data.workflow_run_id
    assert answer.parsed_data.html_url.endswith(f"/octo/demo/actions/runs/{run_id}")
    [run] = sandbox.control.workflow_runs("octo", "demo")
    assert run["id"] == run_id and run["status"] == "queued"
    assert run["inputs"] == {"ticket": "7", "run_key": "k", "mode": "fast"}
    assert run["actor"] == sandbox.app.bot_login
    assert run["payload"]["inputs"] == run["inputs"]
    assert run["payload"]["ref"] == "refs/heads/main"
    assert run["payload"]["workflow"] == ".github/workflows/ourobot-implement.yml"
    got = bot.rest.actions.get_workflow_run("octo", "demo", run_id).parsed_data
    assert (got.event, got.status, got.head_sha) == ("workflow_dispatch", "queued", repo.head_sha)
    assert got.path == ".github/workflows/ourobot-implement.yml"


def test_the_older_version_answers_204_unless_it_asks_for_the_run(sandbox: SandboxHandle, repo):
    token = sandbox.control.installation_token(repo.installation_id)
    body = {"ref": "main", "inputs": {"ticket": "1", "run_key": "a"}}
    assert dispatch(sandbox, token, "ourobot-implement.yml", body).status_code == 204
    asked = dispatch(sandbox, token, "ourobot-implement.yml", {**body, "return_run_details": True})
    assert asked.status_code == 200 and isinstance(asked.json()["workflow_run_id"], int)


@pytest.mark.parametrize(
    ("workflow", "body", "status", "message"),
    [
        ("nope.yml", {"ref": "main"}, 404, "Not Found"),
        ("ci.yml", {"ref": "main"}, 422, "Workflow does not have 'workflow_dispatch' trigger"),
        ("ourobot-implement.yml", {"ref": "gone"}, 422, "No ref found for: gone"),
        (
            "ourobot-implement.yml",
            {"ref": "main", "inputs": {"ticket": "1", "run_key": "k", "title": "x"}},
            422,
            'Unexpected inputs provided: ["title"]',
        ),
        (
            "ourobot-implement.yml",
            {"ref": "main", "inputs": {"ticket": "1"}},
            422,
            "Required input 'run_key' not provided",
        ),
        ("ourobot-implement.yml", {"inputs": {}}, 422, "Validation Failed"),
    ],
)
def test_what_github_refuses(sandbox: SandboxHandle, repo, workflow, body, status, message):
    token = sandbox.control.installation_token(repo.installation_id)
    answer = dispatch(sandbox, token, workflow, body)
    assert (answer.status_code, answer.json()["message"]) == (status, message)
    assert sandbox.control.workflow_runs("octo", "demo") == []


def test_an_app_without_the_actions_permission_is_refused(sandbox: SandboxHandle):
    made = sandbox.create_repo(files=FILES)  # the App's default permissions: no actions
    bot = sandbox.github_installation(made.installation_id)
    with pytest.raises(RequestFailed) as refused:
        bot.rest.actions.create_workflow_dispatch(
            "octo", "demo", "ourobot-implement.yml", ref="main", inputs={"ticket": 1}
        )
    assert refused.value.response.status_code == 403
    assert refused.value.response.headers["x-accepted-github-permissions"] == "actions=write"
    sandbox.create_user("reader")
    sandbox.control.set_permission("octo", "demo", "reader", "read")
    answer = dispatch(sandbox, sandbox.tokens["reader"], "ourobot-implement.yml", {"ref": "main"})
    assert answer.status_code == 403


def test_the_runner_runs_the_command_with_the_runs_token_then_revokes_it(
    sandbox: SandboxHandle, repo, tmp_path
):
    script = tmp_path / "step.py"
    script.write_text(
        textwrap.dedent(
            """\
            import json, os, pathlib, urllib.request
            event = json.loads(pathlib.Path(os.environ["GITHUB_EVENT_PATH"]).read_text())
            api = os.environ["GITHUB_API_URL"] + "/repos/" + os.environ["GITHUB_REPOSITORY"]
            headers = {"Authorization": "token " + os.environ["GITHUB_TOKEN"]}
            def call(method, path, body=None):
                data = json.dumps(body).encode() if body is not None else None
                req = urllib.request.Request(api + path, data=data, headers=headers, method=method)
                try:
                    with urllib.request.urlopen(req) as answer:
                        return answer.status
                except urllib.error.HTTPError as exc:
                    return exc.code
            print(json.dumps({
                "inputs": event["inputs"],
                "checked_out": pathlib.Path("README.md").read_text(),
                "secret": os.environ["MY_SECRET"],
                "check_run": call("POST", "/check-runs", {
                    "name": "ourobot/cycle", "head_sha": os.environ["GITHUB_SHA"],
                    "status": "completed", "conclusion": "success",
                    "output": {"title": "t", "summary": "s"}}),
                "issue": call("POST", "/issues", {"title": "not allowed"}),
            }))
            """
        )
    )
    sandbox.control.set_workflow_command(
        "octo", "demo", "ourobot-implement.yml", [sys.executable, str(script)],
        env={"MY_SECRET": "s3"},
    )  # fmt: skip
    bot = sandbox.github_installation(repo.installation_id)
    bot.rest.actions.create_workflow_dispatch(
        "octo", "demo", "ourobot-implement.yml", ref="main", inputs={"ticket": 3, "run_key": "r"}
    )
    assert sandbox.control.wait_idle(60)
    [run] = sandbox.control.workflow_runs("octo", "demo")
    assert (run["status"], run["conclusion"]) == ("completed", "success"), run["log"]
    seen = json.loads(run["log"].strip().splitlines()[-1])
    assert seen["inputs"]["ticket"] == "3" and seen["checked_out"] == "# demo\n"
    assert seen["secret"] == "s3"
    # The workflow's `permissions:` grant checks and contents, not issues.
    assert (seen["check_run"], seen["issue"]) == (201, 403)
    [check] = bot.rest.checks.list_for_ref("octo", "demo", repo.head_sha).parsed_data.check_runs
    assert check.app.slug == "github-actions"
    expired = httpx.get(
        f"{sandbox.url}/repos/octo/demo", headers={"Authorization": f"token {run['token']}"}
    )
    assert expired.status_code == 401


def test_a_run_without_a_runner_stays_queued_until_moved(sandbox: SandboxHandle, repo):
    bot = sandbox.github_installation(repo.installation_id)
    made = bot.rest.actions.create_workflow_dispatch(
        "octo", "demo", "ourobot-implement.yml", ref="main", inputs={"ticket": 3, "run_key": "r"}
    ).parsed_data
    assert sandbox.control.wait_idle(10)
    run = bot.rest.actions.get_workflow_run("octo", "demo", made.workflow_run_id).parsed_data
    assert run.status == "queued" and run.conclusion is None
    sandbox.control.set_workflow_run("octo", "demo", made.workflow_run_id, "completed", "cancelled")
    run = bot.rest.actions.get_workflow_run("octo", "demo", made.workflow_run_id).parsed_data
    assert (run.status, run.conclusion) == ("completed", "cancelled")
