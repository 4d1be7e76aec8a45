"""The GitHub App manifest flow end to end against the sandbox, through the real CLI: the
manifest ourobot prints is one GitHub accepts (checked by the sandbox as GitHub checks it),
`ourobot app convert` writes the credentials, and `ourobot doctor` passes with them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from app.handlers.routes import build_router
from app.install.manifest import EVENTS, OPTIONAL_PERMISSIONS, PERMISSIONS, build_manifest
from app.sandbox.server import SandboxServer
from app.settings import Settings

pytestmark = pytest.mark.slow

OUROBOT = Path(sys.executable).with_name("ourobot")


def ourobot(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OUROBOT), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def clean_env(tmp_path: Path, **variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OUROBOT_", "ANTHROPIC_"))}
    env.pop("OPENAI_API_KEY", None)
    env["OUROBOT_DATA_DIR"] = str(tmp_path / "data")
    env.update(variables)
    return env


def env_file_values(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line)


@pytest.fixture
def sandbox(tmp_path):
    with SandboxServer(port=0, data_dir=tmp_path / "sandbox") as server:
        yield server


def submit(sandbox: SandboxServer, manifest: dict, state: str = "") -> httpx.Response:
    """What the browser does when the person presses the form's button and confirms."""
    return httpx.post(
        f"{sandbox.url}/settings/apps/new",
        data={"manifest": json.dumps(manifest), "state": state},
        follow_redirects=False,
        timeout=10,
    )


def test_the_manifest_flow_creates_an_app_that_doctor_accepts(tmp_path, sandbox):
    env = clean_env(tmp_path, OUROBOT_GITHUB_API_URL=sandbox.url)
    printed = ourobot(
        env, "app", "manifest", "--url", "https://ourobot.example.com",
        "--redirect-url", "https://ourobot.example.com/created",
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    manifest = json.loads(printed.stdout)
    assert manifest["hook_attributes"]["url"] == "https://ourobot.example.com/api/github/webhooks"

    answer = submit(sandbox, manifest, state="xyz")
    assert answer.status_code == 302, answer.text
    location = urlsplit(answer.headers["location"])
    assert location.path == "/created"
    query = parse_qs(location.query)
    assert query["state"] == ["xyz"]

    env_file = tmp_path / "ourobot.env"
    converted = ourobot(env, "app", "convert", query["code"][0], "--env-file", str(env_file))
    assert converted.returncode == 0, converted.stderr
    values = env_file_values(env_file)
    key_file = Path(values["OUROBOT_PRIVATE_KEY_PATH"])
    assert stat.S_IMODE(env_file.stat().st_mode) == stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert values["OUROBOT_WEBHOOK_SECRET"] not in converted.stdout  # secrets only in files
    again = ourobot(env, "app", "convert", query["code"][0], "--env-file", str(tmp_path / "2.env"))
    assert again.returncode == 2
    assert "used once" in again.stderr

    control = sandbox.control()
    info = control.app_info()
    assert (info["id"], info["slug"]) == (int(values["OUROBOT_APP_ID"]), "ourobot")
    assert info["webhook_secret"] == values["OUROBOT_WEBHOOK_SECRET"]

    doctor_env = {**env, **values}
    uninstalled = ourobot(doctor_env, "doctor")
    assert uninstalled.returncode == 1
    assert "FAIL github app: " in uninstalled.stdout
    assert "installed nowhere" in uninstalled.stdout

    control.create_user("octo")
    control.create_repo("octo", "demo")
    control.install_app("octo", ["demo"])
    healthy = ourobot(doctor_env, "doctor")
    assert healthy.returncode == 0, healthy.stdout
    lines = healthy.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "ok   settings", "ok   webhook secret", "ok   github app", "skip redis",
        "ok   data dir", "ok   database", "skip model keys", "ok   sandbox",
    ]  # fmt: skip
    assert "loopback unreachable, the key and data directory unreadable" in lines[-1]
    assert "App ourobot" in lines[2] and "1 installation" in lines[2]


def test_a_wrong_app_id_is_named_by_doctor(tmp_path, sandbox):
    key = tmp_path / "key.pem"
    key.write_text(sandbox.control().app_info()["private_key_pem"])
    env = clean_env(
        tmp_path,
        OUROBOT_GITHUB_API_URL=sandbox.url,
        OUROBOT_WEBHOOK_SECRET="a-long-enough-webhook-secret",
        OUROBOT_APP_ID="999999",
        OUROBOT_PRIVATE_KEY_PATH=str(key),
    )
    proc = ourobot(env, "doctor")
    assert proc.returncode == 1
    line = next(x for x in proc.stdout.splitlines() if x.startswith("FAIL github app"))
    assert "refused the App's JWT (401)" in line and "OUROBOT_APP_ID=999999" in line


def test_the_sandbox_refuses_what_github_refuses():
    manifest = build_manifest("https://x.example.com")
    manifest["default_permissions"].pop("merge_queues")
    manifest["default_permissions"]["checks"] = "execute"
    with SandboxServer(port=0) as sandbox:
        answer = submit(sandbox, {**manifest, "hook_attribute": {}})
    assert answer.status_code == 422
    assert answer.json()["errors"] == [
        "unknown key 'hook_attribute'",
        "default_permissions.checks: 'execute' is not read, write or admin",
        "default_events: 'merge_group' needs one of the permissions merge_queues",
    ]


def test_installation_tokens_carry_only_the_manifests_permissions(tmp_path):
    manifest = build_manifest("https://x.example.com")
    manifest["default_permissions"].pop("checks")
    manifest["default_events"] = ["issues", "pull_request"]
    with SandboxServer(port=0, data_dir=tmp_path / "sandbox") as sandbox:
        assert submit(sandbox, manifest).status_code == 302
        control = sandbox.control()
        control.create_user("octo")
        repo = control.create_repo("octo", "demo")
        token = control.installation_token(control.install_app("octo", ["demo"]))
        headers = {"Authorization": f"Bearer {token}"}
        denied = httpx.post(
            f"{sandbox.url}/repos/octo/demo/check-runs",
            json={"name": "ourobot/guards", "head_sha": repo["head_sha"]},
            headers=headers,
        )
        allowed = httpx.post(
            f"{sandbox.url}/repos/octo/demo/issues", json={"title": "t"}, headers=headers
        )
    assert denied.status_code == 403
    assert denied.headers["x-accepted-github-permissions"] == "checks=write"
    assert allowed.status_code == 201


def test_the_manifest_subscribes_to_exactly_the_events_ourobot_routes():
    routed = {event for event, _ in build_router(Settings())._handlers}
    assert set(EVENTS) == routed


def test_every_permission_and_event_is_justified_in_the_docs():
    doc = (Path(__file__).resolve().parents[2] / "docs/github-app.md").read_text()
    for permission, (level, _) in PERMISSIONS.items():
        assert f"| `{permission}` | {level} |" in doc, permission
    for event in EVENTS:
        assert f"| `{event}` |" in doc, event


def test_the_actions_permission_is_asked_for_only_with_actions(tmp_path):
    env = clean_env(tmp_path)
    plain = ourobot(env, "app", "manifest", "--url", "https://x.example.com")
    with_actions = ourobot(env, "app", "manifest", "--url", "https://x.example.com", "--actions")
    assert plain.returncode == with_actions.returncode == 0, plain.stderr + with_actions.stderr
    assert "actions" not in json.loads(plain.stdout)["default_permissions"]
    manifest = json.loads(with_actions.stdout)
    assert manifest["default_permissions"]["actions"] == "write"
    with SandboxServer(port=0, data_dir=tmp_path / "sandbox") as sandbox:
        assert submit(sandbox, manifest).status_code == 302  # GitHub accepts it
    doc = (Path(__file__).resolve().parents[2] / "docs/github-app.md").read_text()
    for permission, (level, _) in OPTIONAL_PERMISSIONS.items():
        assert f"| `{permission}` | {level} |" in doc, permission
