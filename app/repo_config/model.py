"""The `.github/ourobot.yml` schema, version 1: every key, its default and its bounds.

Values are validated strictly: YAML `"200"` or `1.5` is not an integer and `"yes"` (quoted) is
not a boolean; a config that means something other than it says must be refused, not guessed.
Every model is frozen; derived values (the protected paths in force, the operator's caps) are
methods that return new values.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, get_args
from urllib.parse import urlsplit

import pathspec
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

if TYPE_CHECKING:
    from app.settings import Settings

CONFIG_VERSION: Final = 1

Mode = Literal["light", "advanced", "pro"]
MODES: tuple[str, ...] = get_args(Mode)
SandboxMode = Literal["auto", "required", "off"]
Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[str, ...] = get_args(Provider)

# Gitignore-style patterns (a pattern without a slash matches at any depth).
# Files that configure or drive a test run, by ecosystem (gitignore syntax, any depth).
DEFAULT_TEST_INFRASTRUCTURE: tuple[str, ...] = (
    # Python: pytest, tox, nox, and code every interpreter start runs
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "noxfile.py",
    "setup.cfg",
    "pyproject.toml",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    # Installed distributions' metadata: an entry point is a plugin pytest loads by itself.
    "*.dist-info/**",
    "*.egg-info/**",
    "*.egg-link",
    # Ruby: RSpec and minitest
    ".rspec",
    "spec_helper.rb",
    "rails_helper.rb",
    "test_helper.rb",
    "Rakefile",
    # JavaScript: the runners' configs and setup files
    "package.json",
    "jest.config.*",
    "jest.setup.*",
    "jest-setup.*",
    "setupTests.*",
    "vitest.config.*",
    "vitest.setup.*",
    "vitest.workspace.*",
    ".mocharc*",
    "ava.config.*",
    "karma.conf.*",
    "jasmine.json",
    "playwright.config.*",
    # Rust: cargo's aliases and flags
    ".cargo/config",
    ".cargo/config.toml",
)
DEFAULT_PROTECTED_PATHS: tuple[str, ...] = (
    ".github/workflows/**",
    ".github/actions/**",
    ".github/ourobot.yml",
    ".github/ourobot/**",
    "CODEOWNERS",
    ".env",
    ".env.*",
    "secrets/**",
    "*.pem",
    "*.key",
    ".gitmodules",
    ".gitattributes",
)
# What judges a PR must not be editable by the PR: protected in advanced and pro mode whatever the
# config (the workflows, the config, and the constitution and prompt overrides under
# .github/ourobot/). In pro mode a change there needs an admin's approval like any protected path.
GOVERNANCE_PATHS: tuple[str, ...] = (
    ".github/workflows/**",
    ".github/ourobot.yml",
    ".github/ourobot/**",
)

DEFAULT_ANTHROPIC_MODEL = "anthropic:claude-sonnet-4-5"
DEFAULT_OPENAI_MODEL = "openai:gpt-5"

StrictInt = Annotated[int, Strict()]
Flag = Annotated[bool, Strict()]
Text = Annotated[str, Strict()]
Limit = Annotated[int, Strict(), Field(ge=0)] | None
Positive = Annotated[int, Strict(), Field(ge=1)]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _path_pattern(value: str) -> str:
    if not value.strip():
        raise ValueError("an empty pattern protects nothing")
    if any(char in value for char in "\n\r\0"):
        raise ValueError(f"pattern {value!r} contains a line break or NUL")
    if value.startswith("!"):
        raise ValueError(f"negation pattern {value!r} is not supported: list only what to protect")
    try:
        pathspec.GitIgnoreSpec.from_lines([value])
    except ValueError as exc:
        raise ValueError(f"invalid pattern {value!r}: {exc}") from None
    return value


NonEmptyText = Annotated[str, Strict(), AfterValidator(_not_blank)]
PathPattern = Annotated[str, Strict(), AfterValidator(_path_pattern)]


def did_you_mean(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """`(did you mean X?)`, or the list of known names when nothing is close."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if close:
        return f"(did you mean {close[0]}?)"
    return f"(known keys: {', '.join(choices)})"


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _none_is_defaults(value: object) -> object:
    # `guards:` with every line below commented out is null in YAML: it means "the defaults",
    # which are the strict values, never "off".
    return {} if value is None else value


class ModelRef(_Section):
    """One model: `provider:name`, optionally at an OpenAI- or Anthropic-compatible base_url."""

    provider: Provider
    name: NonEmptyText
    base_url: Text | None = None

    @property
    def id(self) -> str:
        return f"{self.provider}:{self.name}"

    @model_validator(mode="before")
    @classmethod
    def _from_entry(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_model_id(value)
        if isinstance(value, dict) and "provider" not in value:
            return _from_mapping(value)
        if isinstance(value, dict | ModelRef):
            return value
        raise ValueError(
            f"expected 'anthropic:<model>', 'openai:<model>' or a mapping with id "
            f"(and base_url), got {show_value(value)}"
        )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {value!r}")
        if parts.username or parts.password:
            raise ValueError("base_url must not carry credentials; keys belong in the environment")
        return value

    @model_serializer
    def _as_entry(self) -> str | dict[str, str]:
        # The shape a user writes, so a printed config loads back unchanged.
        if self.base_url is None:
            return self.id
        return {"id": self.id, "base_url": self.base_url}


def parse_model_id(value: str) -> dict[str, str]:
    """`"openai:gpt-5"` -> provider and name; the name may itself contain colons."""
    provider, sep, name = value.partition(":")
    if not sep or not name.strip() or not provider:
        raise ValueError(f"expected 'anthropic:<model>' or 'openai:<model>', got {value!r}")
    if provider not in PROVIDERS:
        raise ValueError(
            f"unknown provider {provider!r} in {value!r} (expected {' or '.join(PROVIDERS)})"
        )
    if any(char.isspace() for char in name):
        raise ValueError(f"model name {name!r} contains whitespace")
    return {"provider": provider, "name": name}


def _from_mapping(value: dict[str, Any]) -> dict[str, Any]:
    allowed = ("id", "base_url")
    for key in value:
        if key not in allowed:
            raise ValueError(f"unknown key {key!r} in a model entry {did_you_mean(key, allowed)}")
    ident = value.get("id")
    if not isinstance(ident, str):
        raise ValueError(f"id: expected 'anthropic:<model>' or 'openai:<model>', got {ident!r}")
    return {**parse_model_id(ident), "base_url": value.get("base_url")}


def _one_or_many(value: object) -> object:
    if isinstance(value, str | dict | ModelRef):
        return [value]
    if isinstance(value, list | tuple) and not value:
        raise ValueError("an empty list: name at least one model")
    return value


ModelList = Annotated[tuple[ModelRef, ...], BeforeValidator(_one_or_many)]


def _models(*ids: str) -> tuple[ModelRef, ...]:
    return tuple(ModelRef.model_validate(ident) for ident in ids)


class ProjectConfig(_Section):
    """Fills `{{PROJECT_NAME}}` / `{{PROJECT_DESCRIPTION}}` in the prompts."""

    name: Text = ""
    description: Text = ""


class GuardsConfig(_Section):
    """The deterministic guards' limits; every numeric limit is null = off."""

    max_deleted_lines: Limit = 200
    max_file_shrink_percent: Annotated[int, Strict(), Field(ge=0, le=100)] | None = 50
    max_deletions_per_iteration: Limit = 5
    max_changed_files: Limit = 50
    max_added_lines: Limit = 2000
    max_diff_bytes: Limit = 2_000_000
    allow_binary: Flag = False
    protected_paths: tuple[PathPattern, ...] | None = None
    extra_protected_paths: tuple[PathPattern, ...] = ()
    secrets: Flag = True
    test_tamper: Flag = True
    # Changes to the files that configure or drive the test run, reported as test-tamper.
    test_infrastructure: Flag = True
    test_infrastructure_paths: tuple[PathPattern, ...] | None = None
    extra_test_infrastructure_paths: tuple[PathPattern, ...] = ()
    apply_to: Literal["bot", "all"] = "bot"

    def effective_test_infrastructure(self) -> tuple[str, ...]:
        """The surface's patterns in force: the defaults (or the replacement list) and extras."""
        base = (
            DEFAULT_TEST_INFRASTRUCTURE
            if self.test_infrastructure_paths is None
            else self.test_infrastructure_paths
        )
        return tuple(dict.fromkeys([*base, *self.extra_test_infrastructure_paths]))

    def effective_protected_paths(self, mode: str) -> tuple[str, ...]:
        """The patterns in force: defaults (or the replacement list), the extras, and in
        advanced and pro mode the governance surface, which no config can unprotect. Pro mode
        returns the same list as advanced: it changes who may approve such a change (an admin),
        not what is protected."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        base = DEFAULT_PROTECTED_PATHS if self.protected_paths is None else self.protected_paths
        paths = [*base, *self.extra_protected_paths]
        if mode in ("advanced", "pro"):
            paths.extend(GOVERNANCE_PATHS)
        return tuple(dict.fromkeys(paths))


class ReviewConfig(_Section):
    """The review panel: which models, how many must approve, how much they see."""

    models: ModelList = Field(
        default_factory=lambda: _models(DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL)
    )
    # Validated even when left at its default: two approvals from a one-model panel never come.
    quorum: StrictInt = Field(default=2, validate_default=True)
    timeout_s: Positive = 300
    context: Literal["low", "max"] = "low"
    max_diff_chars: Positive = 30_000
    rounds: Positive = 2
    # After this many panel rounds on a pull request, a new finding about code the latest fix
    # did not touch is advisory (docs/review.md, "Rounds converge"); null = never.
    converge_after: Positive | None = 2

    @field_validator("models")
    @classmethod
    def _distinct(cls, models: tuple[ModelRef, ...]) -> tuple[ModelRef, ...]:
        seen: set[tuple[str, str | None]] = set()
        for model in models:
            key = (model.id, model.base_url)
            if key in seen:
                raise ValueError(f"{model.id!r} is listed twice; one model cannot vote twice")
            seen.add(key)
        return models

    @field_validator("quorum")
    @classmethod
    def _reachable(cls, quorum: int, info: ValidationInfo) -> int:
        if quorum < 1:
            raise ValueError(
                f"must be at least 1, got {quorum}: a quorum of 0 passes a PR nobody approved"
            )
        models = info.data.get("models")
        if models is not None and quorum > len(models):
            raise ValueError(
                f"{quorum} approvals required but the panel has {len(models)} model(s): it could "
                "never pass; this is a misconfiguration (lower the quorum or add models)"
            )
        return quorum


class ModelsConfig(_Section):
    """Models per role; a list is a fallback order."""

    implementer: ModelList = Field(
        default_factory=lambda: _models(DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL)
    )
    planner: ModelList = Field(
        default_factory=lambda: _models(DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL)
    )
    scout: ModelList = Field(
        default_factory=lambda: _models(DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL)
    )


class BudgetsConfig(_Section):
    """Per-ticket budgets; the server's caps lower them further (`RepoConfig.capped`)."""

    implementer_iterations: Positive = 12
    fix_iterations: Annotated[int, Strict(), Field(ge=0)] = 3
    test_timeout_s: Positive = 600
    usd_per_ticket: Annotated[float, Strict(), Field(ge=0, allow_inf_nan=False)] = 5.0
    # One cycle, from its worktree to its outcome (model calls, test runs, review rounds).
    wall_time_s: Positive = 3600
    # The implementer's model turns in one cycle (each turn is one action: a command, edits,
    # a submission), and how long one of its shell commands may run.
    agent_steps: Positive = 60
    command_timeout_s: Positive = 120


def _workflow_file(value: str) -> str:
    if not _WORKFLOW_FILE.fullmatch(value):
        raise ValueError(
            f"expected a file name under .github/workflows/ such as ourobot-cycle.yml, "
            f"got {value!r}"
        )
    return value


_WORKFLOW_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.ya?ml")
WorkflowFile = Annotated[str, Strict(), AfterValidator(_workflow_file)]
RunsOn = Literal["worker", "actions"]


class ImplementerConfig(_Section):
    """How the implementer treats a ticket."""

    # A ticket carrying one of these labels gets an (advisory) plan first; () = never.
    plan_labels: tuple[NonEmptyText, ...] = ("feature", "enhancement", "type: feature")
    # A ticket carrying this label may change how the suite runs (conftest, runner configs,
    # the scripts and make targets the test command calls, test package __init__ files).
    test_surface_label: NonEmptyText = "ourobot:test-surface"
    # Where a ticket's cycle runs: ourobot's own worker, or the repository's own Actions
    # runner (the App dispatches `workflow` and opens the pull request from its report).
    runs_on: RunsOn = "worker"
    # With `runs_on: actions`: the workflow file (under .github/workflows/) the App dispatches.
    workflow: WorkflowFile = "ourobot-cycle.yml"
    # With `runs_on: actions`: how long after the dispatch the App waits for the run's report
    # before it blocks the ticket (from 5 minutes to a day).
    actions_timeout_s: Annotated[int, Strict(), Field(ge=300, le=86_400)] = 7200


# What `setup.network` allows by default: the public package registries of the common
# ecosystems (a repository's list replaces it).
DEFAULT_SETUP_NETWORK: tuple[str, ...] = (
    "pypi.org",
    "files.pythonhosted.org",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "repo.maven.apache.org",
    "repo1.maven.org",
    "plugins.gradle.org",
    "services.gradle.org",
    "rubygems.org",
    "index.rubygems.org",
    "proxy.golang.org",
    "sum.golang.org",
    "crates.io",
    "index.crates.io",
    "static.crates.io",
    "repo.packagist.org",
)


def _network_host(value: str) -> str:
    """`host` or `host:port`: a name (or IPv4 address) and an optional port, nothing else."""
    host, _, port = value.strip().partition(":")
    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*"
                        r"[A-Za-z0-9])?)*", host):  # fmt: skip
        raise ValueError(f"{value!r} is not a host name or host:port")
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(f"{value!r} is not a host name or host:port (a port from 1 to 65535)")
    return value.strip().lower()


NetworkHost = Annotated[str, Strict(), AfterValidator(_network_host)]


class SetupConfig(_Section):
    """The project's environment: a command run before the baseline, whose result is cached."""

    # Run in the worktree, in the cage, with outbound access to `network` only; what it writes
    # (a virtualenv, node_modules) is there for every later run and never committed.
    command: NonEmptyText | None = None
    network: tuple[NetworkHost, ...] = DEFAULT_SETUP_NETWORK
    # Files (gitignore-style patterns) whose contents decide the result, with the command.
    cache_key: tuple[PathPattern, ...] = ()
    timeout_s: Annotated[int, Strict(), Field(ge=10, le=7200)] = 1200


class LoopConfig(_Section):
    """How much the loop may start on its own in this repository; the operator's caps
    (`OUROBOT_CAP_CYCLES_PER_HOUR`, `OUROBOT_CAP_OPEN_PRS`) lower both further."""

    # Cycles started (labels and `/ourobot implement`) in the last hour, fix rounds included.
    cycles_per_hour: Positive = 6
    # ourobot's own pull requests open at once; a new ticket waits until one is closed.
    max_open_prs: Positive = 5


class MergeConfig(_Section):
    """What the merge gate requires besides guards and review (docs/gate.md)."""

    require_human_approval: Flag = True
    method: Literal["merge", "squash", "rebase"] = "squash"
    # null: the branch protection's required checks, else every check on the head; [] says
    # the repository has no CI (without it, no CI at all is never green).
    required_checks: tuple[NonEmptyText, ...] | None = None
    require_up_to_date: Flag = True


class ScoutConfig(_Section):
    """The scout's schedule. null (the default) = never on a schedule, only `/ourobot scout`."""

    # At most once per this many hours (UTC slots from the epoch), between 1 hour and 30 days.
    every_hours: Annotated[int, Strict(), Field(ge=1, le=720)] | None = None


def _section(model: type[_Section]) -> Any:
    return Field(default_factory=model)


_OrDefaults = BeforeValidator(_none_is_defaults)


class RepoConfig(_Section):
    """A repository's `.github/ourobot.yml`, version 1, with every default filled in."""

    version: Literal[1] = CONFIG_VERSION
    mode: Mode = "advanced"
    project: Annotated[ProjectConfig, _OrDefaults] = _section(ProjectConfig)
    test_command: NonEmptyText = "pytest -q"
    # bubblewrap for the test command: auto (fall back, with a warning), required, off.
    sandbox: SandboxMode = "auto"
    guards: Annotated[GuardsConfig, _OrDefaults] = _section(GuardsConfig)
    review: Annotated[ReviewConfig, _OrDefaults] = _section(ReviewConfig)
    models: Annotated[ModelsConfig, _OrDefaults] = _section(ModelsConfig)
    budgets: Annotated[BudgetsConfig, _OrDefaults] = _section(BudgetsConfig)
    merge: Annotated[MergeConfig, _OrDefaults] = _section(MergeConfig)
    implementer: Annotated[ImplementerConfig, _OrDefaults] = _section(ImplementerConfig)
    scout: Annotated[ScoutConfig, _OrDefaults] = _section(ScoutConfig)
    loop: Annotated[LoopConfig, _OrDefaults] = _section(LoopConfig)
    setup: Annotated[SetupConfig, _OrDefaults] = _section(SetupConfig)
    # The folders whose programs the sandbox has (its PATH, in order); null: the harness's own
    # PATH, version managers' shims resolved.
    toolchain_path: tuple[NonEmptyText, ...] | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _supported(cls, value: object) -> object:
        # Literal[1] alone would accept true and 1.0.
        if type(value) is not int:
            raise ValueError(f"expected {CONFIG_VERSION}, got {show_value(value)}")
        if value != CONFIG_VERSION:
            raise ValueError(
                f"unsupported version {value}: this ourobot reads version {CONFIG_VERSION}"
            )
        return value

    def capped(self, settings: Settings) -> RepoConfig:
        """This config with every budget at most the operator's cap (a repo may only lower)."""
        budgets = self.budgets.model_copy(
            update={
                "usd_per_ticket": min(self.budgets.usd_per_ticket, settings.cap_usd_per_ticket),
                "implementer_iterations": min(
                    self.budgets.implementer_iterations, settings.cap_implementer_iterations
                ),
                "fix_iterations": min(self.budgets.fix_iterations, settings.cap_fix_iterations),
                "test_timeout_s": min(self.budgets.test_timeout_s, settings.cap_test_timeout_s),
                "wall_time_s": min(self.budgets.wall_time_s, settings.cap_wall_time_s),
                "agent_steps": min(self.budgets.agent_steps, settings.cap_agent_steps),
                "command_timeout_s": min(
                    self.budgets.command_timeout_s, settings.cap_command_timeout_s
                ),
            }
        )
        review = self.review.model_copy(
            update={"rounds": min(self.review.rounds, settings.cap_review_rounds)}
        )
        loop = self.loop.model_copy(
            update={
                "cycles_per_hour": min(self.loop.cycles_per_hour, settings.cap_cycles_per_hour),
                "max_open_prs": min(self.loop.max_open_prs, settings.cap_open_prs),
            }
        )
        return self.model_copy(update={"budgets": budgets, "review": review, "loop": loop})

    def to_document(self) -> dict[str, Any]:
        """Plain data in the file's own shape; dumped as YAML it loads back to this config."""
        return self.model_dump(mode="json")


def show_value(value: object) -> str:
    """A value as the user wrote it in YAML, short and on one line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= 60 else text[:56] + "...'"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return str(value)
