"""The deployment files a maintainer copies: compose.yaml (validated by `docker compose config`),
the Dockerfile, the Procfile and the systemd units. Every command they run must be one the
`ourobot` parser accepts, so a renamed flag breaks this test rather than a deployment."""

from __future__ import annotations

import configparser
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from app.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
UNITS = sorted((ROOT / "docs/examples/systemd").glob("*.service"))
SERVICES = {"web", "worker", "beat", "redis", "postgres"}


def parses_as_ourobot(argv: list[str]) -> None:
    assert argv[0].endswith("ourobot"), argv
    args = build_parser().parse_args(argv[1:])
    assert getattr(args, "handler", None) is not None, argv


def compose_command() -> list[str]:
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    if legacy:
        return [legacy]
    pytest.skip("neither `docker compose` nor `docker-compose` is installed")


def compose(
    tmp_path: Path, *args: str, password: str | None = "pw"  # noqa: S107
) -> subprocess.CompletedProcess[str]:
    """`docker compose config` on a copy of compose.yaml beside the files it names."""
    for name in ("compose.yaml", "Dockerfile", ".dockerignore"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "ourobot.env").write_text("OUROBOT_APP_ID=1\nOUROBOT_WEBHOOK_SECRET=s\n")
    (tmp_path / "ourobot.pem").write_text("placeholder\n")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)}
    if password is not None:
        env["OUROBOT_POSTGRES_PASSWORD"] = password
    return subprocess.run(
        [*compose_command(), "-f", "compose.yaml", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_compose_config_validates_and_starts_everything_with_health_checks(tmp_path):
    proc = compose(tmp_path, "config")
    assert proc.returncode == 0, proc.stderr
    config = yaml.safe_load(proc.stdout)
    services = config["services"]
    assert set(services) == SERVICES
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no health check"
    for name in ("web", "worker", "beat"):
        parses_as_ourobot(services[name]["command"])
        depends = services[name]["depends_on"]
        assert {dep: spec["condition"] for dep, spec in depends.items()} == {
            "redis": "service_healthy",
            "postgres": "service_healthy",
        }
        assert services[name]["environment"]["OUROBOT_DATABASE_URL"].startswith(
            "postgresql://ourobot:pw@postgres:5432/"
        )
    # Only the receiver is reachable, and only from the host itself (a TLS proxy goes in front).
    assert [p for s in services.values() for p in s.get("ports", [])] and "ports" not in services[
        "postgres"
    ]


def test_compose_refuses_to_run_without_a_database_password(tmp_path):
    proc = compose(tmp_path, "config", password=None)
    assert proc.returncode != 0
    assert "OUROBOT_POSTGRES_PASSWORD" in proc.stderr


def test_dockerfile_is_small_and_runs_as_a_user_without_dev_tools():
    text = (ROOT / "Dockerfile").read_text()
    final = text.split("\nFROM ")[-1]  # the runtime stage
    user = [line.split()[1] for line in final.splitlines() if line.startswith("USER ")]
    assert user and user[-1] not in ("root", "0")
    assert "[dev]" not in text and "pytest" not in text
    assert "/src" not in final.replace("--from=build /opt/ourobot", "")  # no source tree shipped
    assert "--no-install-recommends" in final and "rm -rf /var/lib/apt/lists" in final
    cmd = next(line for line in final.splitlines() if line.startswith("CMD "))
    parses_as_ourobot(yaml.safe_load(cmd.removeprefix("CMD ")))
    # Every package the distribution ships is copied in.
    pyproject = (ROOT / "pyproject.toml").read_text()
    for package in ("app", "tasks", "reviewers", "prompts"):
        assert f'"{package}*"' in pyproject
        assert f"COPY {package} /src/{package}" in text


def test_procfile_runs_web_worker_and_beat():
    lines = [line for line in (ROOT / "Procfile").read_text().splitlines() if line.strip()]
    kinds = {}
    for line in lines:
        kind, command = line.split(":", 1)
        argv = shlex.split(command.replace("${PORT:-3000}", "3000"))
        parses_as_ourobot(argv)
        kinds[kind] = argv[1]
    assert kinds == {"web": "serve", "worker": "worker", "beat": "beat"}


@pytest.mark.parametrize("unit", UNITS, ids=lambda p: p.name)
def test_systemd_unit_runs_an_ourobot_command_as_its_own_user(unit: Path):
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(unit.read_text())
    service = parser["Service"]
    parses_as_ourobot(shlex.split(service["ExecStart"]))
    assert service["User"] == "ourobot"
    assert service["EnvironmentFile"] == "/etc/ourobot/env"
    assert service["StateDirectory"] == "ourobot"
    assert service["RestartPreventExitStatus"] == "2"
    assert parser["Install"]["WantedBy"] == "multi-user.target"


def test_the_units_say_where_they_assume_ourobot_is_installed():
    assert {unit.name for unit in UNITS} == {
        "ourobot-web.service",
        "ourobot-worker.service",
        "ourobot-beat.service",
    }
    web = (ROOT / "docs/examples/systemd/ourobot-web.service").read_text()
    assert "Assumes ourobot installed in a virtualenv at /opt/ourobot" in web
    deployment = (ROOT / "docs/deployment.md").read_text()
    assert "/opt/ourobot" in deployment and "pipx install" in deployment
