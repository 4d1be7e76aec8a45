"""Server settings: `OUROBOT_*` environment variables (and model keys), built once at startup.

Nothing here runs at import time. Call `load_settings()` in an entry point and pass the
result down; there is no module-level settings object to mutate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from app.errors import ConfigError

DEFAULT_API_URL = "https://api.github.com"
REDIS_SCHEMES = ("redis", "rediss", "unix")

# The longest any task may run (hard limit). Celery's Redis visibility timeout is set above it,
# so a task still running is never handed to a second worker.
DEFAULT_TASK_TIME_LIMIT_S = 3600
# A status token short enough to guess would open the page to anyone who tries.
MIN_STATUS_TOKEN_CHARS = 16


def default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "ourobot"


class Settings(BaseSettings):
    """Operator-controlled settings. Secrets live here (environment), never in repo YAML."""

    model_config = SettingsConfigDict(
        env_prefix="OUROBOT_", extra="ignore", frozen=True, populate_by_name=True
    )

    app_id: int | None = None
    private_key: SecretStr | None = None
    private_key_path: Path | None = None
    webhook_secret: SecretStr | None = None
    github_api_url: str = DEFAULT_API_URL
    redis_url: str | None = None
    # The Celery queue workers consume and tasks are sent to: give each deployment (or each
    # `ourobot demo` run) sharing one Redis its own, so no worker takes another's tasks.
    celery_queue: str = Field(default="ourobot", min_length=1, pattern=r"^[A-Za-z0-9._:-]+$")
    database_url: str | None = None
    data_dir: Path = Field(default_factory=default_data_dir)
    operators: Annotated[tuple[str, ...], NoDecode] = ()
    # The read-only status page at /status on `ourobot serve`: off (404) unless this is set;
    # a request must carry it (bearer header, or ?token= once, then a cookie).
    status_token: SecretStr | None = None

    # Workers. Plugin job modules (comma-separated dotted names) the worker and the embedded
    # runner import at start, so their `@job` functions become tasks.
    extra_job_modules: Annotated[tuple[str, ...], NoDecode] = ()
    # The login ourobot's comments appear under when it runs as an Action with a token
    # (the App learns its own from GitHub). Only comments by this login count as ourobot's.
    bot_login: str = "github-actions[bot]"
    # The Action's gate reports only unless told to merge (its `merge: true` input); the App
    # merges ourobot's own pull requests, or on `/ourobot merge`, whatever this says.
    gate_merge: bool = False
    task_time_limit_s: int = Field(default=DEFAULT_TASK_TIME_LIMIT_S, gt=0)
    # The sweeper re-submits inbox rows still unfinished `sweep_after_s` after arrival.
    sweep_interval_s: float = Field(default=60.0, gt=0)
    sweep_after_s: float = Field(default=300.0, gt=0)
    # How often failed webhook deliveries are listed and redelivered (needs App credentials).
    redelivery_interval_s: float = Field(default=600.0, gt=0)
    # How often the beat looks for repositories due a scheduled scout run (`scout.every_hours`).
    scout_sweep_interval_s: float = Field(default=3600.0, gt=0)

    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY", "anthropic_api_key")
    )
    anthropic_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_BASE_URL", "anthropic_base_url")
    )
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "openai_base_url")
    )

    # Server mode (`serve`, `worker`, the Action) runs code only in the bubblewrap sandbox;
    # this lets cycles run without it (every cycle's record and pull request then say so).
    allow_unsandboxed: bool = False
    # Where the operator keeps the env file these settings come from (e.g. /etc/ourobot/env):
    # the startup check refuses to run when the sandbox would mount it.
    env_file: Path | None = None
    # What one caged run may take (its processes, memory, /tmp and what it may write).
    cage_processes: int = Field(default=512, ge=16)
    cage_memory_mb: int = Field(default=4096, ge=64)
    cage_tmp_mb: int = Field(default=1024, ge=16)
    cage_disk_mb: int = Field(default=1024, ge=16)
    # The setup phase writes more (a virtualenv, node_modules): its own disk bound, and how much
    # of the data directory each repository's cached setups may take.
    cage_setup_disk_mb: int = Field(default=8192, ge=16)
    setup_cache_mb: int = Field(default=10240, ge=64)

    # Operator caps. A repository's config may lower these, never raise them.
    cap_usd_per_ticket: float = 5.0
    # Model spend per installation per UTC day (None: no daily cap).
    cap_usd_per_day: float | None = None
    cap_implementer_iterations: int = 12
    cap_fix_iterations: int = 3
    cap_test_timeout_s: int = 600
    cap_review_rounds: int = 2
    cap_wall_time_s: int = 3600
    cap_agent_steps: int = 100
    cap_command_timeout_s: int = 600
    # The loop in one repository: cycles started per hour, ourobot pull requests open at once.
    cap_cycles_per_hour: int = 20
    cap_open_prs: int = 10
    # Model prices in USD per million tokens, JSON: {"<model id or prefix*>": {"input": 3,
    # "output": 15, "cache_read": 0.3, "cache_write": 3.75}}; ahead of the built-in table.
    model_prices: Annotated[dict[str, dict[str, float]], NoDecode] = Field(default_factory=dict)

    @field_validator("operators", "extra_job_modules", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(login.strip() for login in value.split(",") if login.strip())
        return value

    @field_validator("model_prices", mode="before")
    @classmethod
    def _price_table(cls, value: Any) -> Any:
        from app.controls.pricing import check_price_entry

        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else {}
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON: {exc.msg} at character {exc.pos}") from None
        if not isinstance(value, Mapping):
            raise ValueError("expected a JSON object of model -> prices")
        for key, entry in value.items():
            check_price_entry(str(key), entry)
        return value

    @field_validator("status_token")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_STATUS_TOKEN_CHARS:
            raise ValueError(
                f"must be at least {MIN_STATUS_TOKEN_CHARS} characters (try: openssl rand -hex 24)"
            )
        return value

    @field_validator("github_api_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("redis_url", mode="before")
    @classmethod
    def _redis_url(cls, value: Any) -> Any:
        # Checked here, at startup, so a typo is one line naming the variable rather than a
        # traceback from deep inside Celery or redis-py the first time a process connects.
        if isinstance(value, str) and not value.strip():
            return None  # OUROBOT_REDIS_URL= (empty) means embedded mode, as unset does
        if isinstance(value, str) and urlsplit(value).scheme not in REDIS_SCHEMES:
            raise ValueError(
                "not a Redis URL: expected redis://HOST:PORT/DB, rediss://... or unix://PATH"
            )
        return value

    @property
    def effective_database_url(self) -> str:
        """The configured database, or a SQLite file under the data directory."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'ourobot.sqlite3'}"

    @property
    def embedded(self) -> bool:
        """No Redis configured: the server runs tasks in-process from the durable inbox."""
        return not self.redis_url

    def private_key_pem(self) -> str | None:
        """The App's private key, from the variable or the file it points at."""
        if self.private_key is not None:
            return self.private_key.get_secret_value()
        if self.private_key_path is not None:
            try:
                return self.private_key_path.read_text()
            except OSError as exc:
                raise ConfigError(
                    f"OUROBOT_PRIVATE_KEY_PATH: cannot read {self.private_key_path}: {exc.strerror}"
                ) from None
        return None

    def has_app_credentials(self) -> bool:
        return self.app_id is not None and (
            self.private_key is not None or self.private_key_path is not None
        )


class _ExplicitSettings(Settings):
    """Settings validated from given values only: the process environment is not consulted."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def load_settings(env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build settings from the process environment (or `env`), with explicit overrides.

    Errors become a one-line `ConfigError` naming the variable.
    """
    try:
        if env is None:
            return Settings(**overrides)
        values: dict[str, Any] = {}
        for name, field in Settings.model_fields.items():
            alias = field.validation_alias
            keys = [f"OUROBOT_{name.upper()}"]
            if isinstance(alias, AliasChoices):
                keys = [str(choice) for choice in alias.choices if str(choice).isupper()]
            for key in keys:
                if key in env:
                    values[name] = env[key]
                    break
        values.update(overrides)
        explicit = _ExplicitSettings(**values)
        return Settings.model_construct(**explicit.model_dump())
    except ValidationError as exc:
        first = exc.errors()[0]
        field_name = ".".join(str(p) for p in first["loc"]) or "settings"
        var = field_name.upper() if field_name.isupper() else f"OUROBOT_{field_name.upper()}"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{var}: {message}") from None
