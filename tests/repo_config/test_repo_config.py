"""The `.github/ourobot.yml` v1 model: defaults, every key, strict refusals with file:line: key."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pydantic
import pytest
import yaml

from app.errors import ConfigError
from app.repo_config import (
    DEFAULT_PROTECTED_PATHS,
    GOVERNANCE_PATHS,
    MAX_CONFIG_BYTES,
    GuardsConfig,
    ModelRef,
    RepoConfig,
    load_repo_config,
    load_repo_config_file,
)
from app.settings import load_settings

SOURCE = ".github/ourobot.yml"


def load(text: str) -> RepoConfig:
    return load_repo_config(textwrap.dedent(text))


def error_of(text: str, source: str = SOURCE) -> str:
    with pytest.raises(ConfigError) as info:
        load_repo_config(textwrap.dedent(text), source=source)
    message = str(info.value)
    assert "\n" not in message
    return message


# --- defaults -------------------------------------------------------------------------------


def test_missing_file_means_defaults_as_designed():
    config = load_repo_config(None)
    assert config == RepoConfig()
    assert config.version == 1
    assert config.mode == "advanced"
    assert (config.project.name, config.project.description) == ("", "")
    assert config.test_command == "pytest -q"
    guards = config.guards
    assert (
        guards.max_deleted_lines,
        guards.max_file_shrink_percent,
        guards.max_deletions_per_iteration,
        guards.max_changed_files,
        guards.max_added_lines,
        guards.max_diff_bytes,
    ) == (200, 50, 5, 50, 2000, 2_000_000)
    assert guards.allow_binary is False
    assert guards.protected_paths is None
    assert guards.extra_protected_paths == ()
    assert guards.secrets is True
    assert guards.test_tamper is True
    assert guards.apply_to == "bot"
    review = config.review
    assert (review.quorum, review.timeout_s, review.context) == (2, 300, "low")
    assert (review.max_diff_chars, review.rounds) == (30000, 2)
    assert budgets_of(config) == (12, 3, 600, 5.0)
    assert config.merge.require_human_approval is True
    assert config.merge.method == "squash"
    assert config.merge.required_checks is None
    assert config.merge.require_up_to_date is True


def budgets_of(config: RepoConfig) -> tuple[int, int, int, float]:
    b = config.budgets
    return (b.implementer_iterations, b.fix_iterations, b.test_timeout_s, b.usd_per_ticket)


def test_default_review_panel_spans_two_vendors_and_can_reach_quorum():
    models = RepoConfig().review.models
    assert {model.provider for model in models} == {"anthropic", "openai"}
    assert len(models) >= RepoConfig().review.quorum


def test_default_role_models_are_nonempty_fallback_lists():
    config = RepoConfig()
    for role in (config.models.implementer, config.models.planner, config.models.scout):
        assert isinstance(role, tuple)
        assert role
        assert all(isinstance(model, ModelRef) for model in role)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "{}\n"])
def test_empty_file_means_defaults(text):
    assert load_repo_config(text) == RepoConfig()


def test_null_section_means_that_sections_defaults_not_off():
    config = load(
        """\
        version: 1
        guards:
          # max_deleted_lines: 100
        merge:
        """
    )
    assert config.guards == GuardsConfig()
    assert config.merge.require_human_approval is True


def test_config_is_frozen():
    config = RepoConfig()
    with pytest.raises(pydantic.ValidationError):
        config.guards.max_deleted_lines = None  # type: ignore[misc]


# --- every key ------------------------------------------------------------------------------

FULL = """\
version: 1
mode: pro
project: {name: Widget, description: "Makes widgets"}
test_command: "make check"
guards:
  max_deleted_lines: 10
  max_file_shrink_percent: 100
  max_deletions_per_iteration: 0
  max_changed_files: 7
  max_added_lines: 300
  max_diff_bytes: 4096
  allow_binary: true
  protected_paths: ["deploy/**", "*.tfstate"]
  extra_protected_paths: [infra/**]
  secrets: false
  test_tamper: false
  apply_to: all
review:
  models:
    - anthropic:claude-opus-4-1
    - {id: "openai:qwen2.5-coder:7b", base_url: "http://127.0.0.1:11434/v1"}
    - openai:gpt-5
  quorum: 3
  timeout_s: 60
  context: max
  max_diff_chars: 1000
  rounds: 4
models:
  implementer: openai:gpt-5
  planner: [anthropic:claude-opus-4-1, openai:gpt-5]
  scout: {id: "anthropic:claude-haiku", base_url: "https://proxy.example/anthropic"}
budgets: {implementer_iterations: 3, fix_iterations: 0, test_timeout_s: 30, usd_per_ticket: 0.5}
merge: {require_human_approval: false, method: rebase, required_checks: [ci/test, lint]}
"""


def test_every_key_is_read():
    config = load_repo_config(FULL)
    assert config.mode == "pro"
    assert (config.project.name, config.project.description) == ("Widget", "Makes widgets")
    assert config.test_command == "make check"
    guards = config.guards
    assert (
        guards.max_deleted_lines,
        guards.max_file_shrink_percent,
        guards.max_deletions_per_iteration,
        guards.max_changed_files,
        guards.max_added_lines,
        guards.max_diff_bytes,
    ) == (10, 100, 0, 7, 300, 4096)
    assert guards.allow_binary is True
    assert guards.protected_paths == ("deploy/**", "*.tfstate")
    assert guards.extra_protected_paths == ("infra/**",)
    assert (guards.secrets, guards.test_tamper, guards.apply_to) == (False, False, "all")
    review = config.review
    assert [model.id for model in review.models] == [
        "anthropic:claude-opus-4-1",
        "openai:qwen2.5-coder:7b",
        "openai:gpt-5",
    ]
    assert review.models[1].base_url == "http://127.0.0.1:11434/v1"
    assert review.models[1].name == "qwen2.5-coder:7b"
    assert (review.quorum, review.timeout_s, review.context) == (3, 60, "max")
    assert (review.max_diff_chars, review.rounds) == (1000, 4)
    assert [m.id for m in config.models.implementer] == ["openai:gpt-5"]
    assert [m.id for m in config.models.planner] == ["anthropic:claude-opus-4-1", "openai:gpt-5"]
    assert config.models.scout == (
        ModelRef(
            provider="anthropic", name="claude-haiku", base_url="https://proxy.example/anthropic"
        ),
    )
    assert budgets_of(config) == (3, 0, 30, 0.5)
    assert config.merge.require_human_approval is False
    assert config.merge.method == "rebase"
    assert config.merge.required_checks == ("ci/test", "lint")


@pytest.mark.parametrize("config_text", [FULL, None], ids=["full", "defaults"])
def test_printed_document_loads_back_to_the_same_config(config_text):
    config = load_repo_config(config_text)
    printed = yaml.safe_dump(config.to_document(), sort_keys=False)
    assert load_repo_config(printed) == config


def test_every_documented_key_is_in_the_document():
    document = RepoConfig().to_document()
    assert list(document) == [
        "version", "mode", "project", "test_command", "sandbox", "guards", "review", "models",
        "budgets", "merge", "implementer", "scout", "loop", "setup", "toolchain_path",
    ]  # fmt: skip
    assert document["scout"] == {"every_hours": None}
    assert list(document["guards"]) == [
        "max_deleted_lines", "max_file_shrink_percent", "max_deletions_per_iteration",
        "max_changed_files", "max_added_lines", "max_diff_bytes", "allow_binary",
        "protected_paths", "extra_protected_paths", "secrets", "test_tamper",
        "test_infrastructure", "test_infrastructure_paths", "extra_test_infrastructure_paths",
        "apply_to",
    ]  # fmt: skip
    assert list(document["review"]) == [
        "models", "quorum", "timeout_s", "context", "max_diff_chars", "rounds", "converge_after",
    ]  # fmt: skip
    assert list(document["models"]) == ["implementer", "planner", "scout"]
    assert list(document["budgets"]) == [
        "implementer_iterations", "fix_iterations", "test_timeout_s", "usd_per_ticket",
        "wall_time_s", "agent_steps", "command_timeout_s",
    ]  # fmt: skip
    assert list(document["merge"]) == [
        "require_human_approval", "method", "required_checks", "require_up_to_date",
    ]  # fmt: skip
    assert list(document["loop"]) == ["cycles_per_hour", "max_open_prs"]


LIMITS = [
    "max_deleted_lines",
    "max_file_shrink_percent",
    "max_deletions_per_iteration",
    "max_changed_files",
    "max_added_lines",
    "max_diff_bytes",
]


@pytest.mark.parametrize("key", LIMITS)
@pytest.mark.parametrize("spelling", ["null", "~", ""])
def test_null_turns_each_numeric_limit_off(key, spelling):
    config = load(f"version: 1\nguards:\n  {key}: {spelling}\n")
    assert getattr(config.guards, key) is None
    others = [other for other in LIMITS if other != key]
    assert all(getattr(config.guards, other) is not None for other in others)


# --- refusals: file:line: key: message ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "version: 1\nguards:\n  max_deleted_lines: 3\n  max_delete_lines: 3\n",
            ":4: guards.max_delete_lines: unknown key (did you mean max_deleted_lines?)",
        ),
        ("version: 1\nguard: {}\n", ":2: guard: unknown key (did you mean guards?)"),
        (
            "version: 1\nreview:\n  rounds: 1\n  colour: red\n",
            ":4: review.colour: unknown key (known keys: models, quorum, timeout_s, context, "
            "max_diff_chars, rounds, converge_after)",
        ),
        (
            "version: 1\nproject:\n  title: x\n",
            ":3: project.title: unknown key (known keys: name, description)",
        ),
        (
            "version: 1\nbudgets:\n  usd_per_tiket: 1\n",
            ":3: budgets.usd_per_tiket: unknown key (did you mean usd_per_ticket?)",
        ),
        (
            "version: 1\nmodels:\n  reviewer: openai:gpt-5\n",
            ":3: models.reviewer: unknown key (known keys: implementer, planner, scout)",
        ),
        (
            "version: 1\nmerge:\n  methd: merge\n",
            ":3: merge.methd: unknown key (did you mean method?)",
        ),
    ],
)
def test_unknown_keys_are_refused_at_every_level(text, expected):
    assert error_of(text) == SOURCE + expected


@pytest.mark.parametrize(
    ("value", "shown"),
    [("lots", "'lots'"), ('"200"', "'200'"), ("1.5", "1.5"), ("true", "true"), ("[1]", "a list")],
)
def test_limit_must_be_an_integer_or_null_never_coerced(value, shown):
    text = f"# header\nversion: 1\nmode: advanced\nguards:\n  max_deleted_lines: {value}\n"
    assert error_of(text) == (
        f"{SOURCE}:5: guards.max_deleted_lines: expected an integer or null, got {shown}"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "version: 1\nguards: {max_changed_files: -1}\n",
            ":2: guards.max_changed_files: must be at least 0, got -1",
        ),
        (
            "version: 1\nguards:\n  max_file_shrink_percent: 101\n",
            ":3: guards.max_file_shrink_percent: must be at most 100, got 101",
        ),
        (
            "version: 1\nguards:\n  max_file_shrink_percent: -5\n",
            ":3: guards.max_file_shrink_percent: must be at least 0, got -5",
        ),
        (
            "version: 1\nguards:\n  allow_binary: 'yes'\n",
            ":3: guards.allow_binary: expected true or false, got 'yes'",
        ),
        (
            "version: 1\nguards:\n  secrets: 1\n",
            ":3: guards.secrets: expected true or false, got 1",
        ),
        (
            "version: 1\nguards:\n  apply_to: everyone\n",
            ":3: guards.apply_to: expected 'bot' or 'all', got 'everyone'",
        ),
        (
            "version: 1\nguards:\n  protected_paths: secrets/**\n",
            ":3: guards.protected_paths: expected a list or null, got 'secrets/**'",
        ),
        (
            "version: 1\nguards:\n  extra_protected_paths:\n    - ok/**\n    - 5\n",
            ":5: guards.extra_protected_paths[1]: expected a string, got 5 "
            "(quote it to make it a string)",
        ),
        (
            "version: 1\nguards:\n  extra_protected_paths: ['!.env']\n",
            ":3: guards.extra_protected_paths[0]: negation pattern '!.env' is not supported: "
            "list only what to protect",
        ),
        (
            "version: 1\nguards:\n  protected_paths: ['docs/**', '']\n",
            ":3: guards.protected_paths[1]: an empty pattern protects nothing",
        ),
        (
            "version: 1\nguards:\n  protected_paths: ['a\\']\n",
            ":3: guards.protected_paths[0]: invalid pattern 'a\\\\': Invalid git pattern: 'a\\\\'",
        ),
        ("version: 1\nguards: 5\n", ":2: guards: expected a mapping, got 5"),
        (
            "version: 1\nmode: Advanced\n",
            ":2: mode: expected 'light', 'advanced' or 'pro', got 'Advanced'",
        ),
        ("version: 1\nmode: yes\n", ":2: mode: expected 'light', 'advanced' or 'pro', got true"),
        ("version: 1\ntest_command: ''\n", ":2: test_command: must not be empty"),
        ("version: 1\ntest_command: null\n", ":2: test_command: expected a string, got null"),
        (
            "version: 1\nproject:\n  name: 2048\n",
            ":3: project.name: expected a string, got 2048 (quote it to make it a string)",
        ),
        (
            "version: 1\nreview:\n  context: medium\n",
            ":3: review.context: expected 'low' or 'max', got 'medium'",
        ),
        (
            "version: 1\nreview:\n  timeout_s: 0\n",
            ":3: review.timeout_s: must be at least 1, got 0",
        ),
        (
            "version: 1\nreview:\n  max_diff_chars: '30000'\n",
            ":3: review.max_diff_chars: expected an integer, got '30000'",
        ),
        (
            "version: 1\nbudgets:\n  usd_per_ticket: '5'\n",
            ":3: budgets.usd_per_ticket: expected a number, got '5'",
        ),
        (
            "version: 1\nbudgets:\n  usd_per_ticket: .inf\n",
            ":3: budgets.usd_per_ticket: must be a finite number, got inf",
        ),
        (
            "version: 1\nbudgets:\n  usd_per_ticket: -1\n",
            ":3: budgets.usd_per_ticket: must be at least 0, got -1",
        ),
        (
            "version: 1\nbudgets:\n  implementer_iterations: 2.0\n",
            ":3: budgets.implementer_iterations: expected an integer, got 2.0",
        ),
        (
            "version: 1\nbudgets:\n  fix_iterations: -1\n",
            ":3: budgets.fix_iterations: must be at least 0, got -1",
        ),
        (
            "version: 1\nmerge:\n  method: fast-forward\n",
            ":3: merge.method: expected 'merge', 'squash' or 'rebase', got 'fast-forward'",
        ),
        (
            "version: 1\nmerge:\n  required_checks: ci\n",
            ":3: merge.required_checks: expected a list or null, got 'ci'",
        ),
        (
            "version: 1\nmerge:\n  require_human_approval: 'false'\n",
            ":3: merge.require_human_approval: expected true or false, got 'false'",
        ),
    ],
)
def test_wrong_values_are_refused_naming_line_and_key(text, expected):
    assert error_of(text) == SOURCE + expected


def test_the_error_nearest_the_top_is_reported():
    text = "version: 1\nmerge:\n  method: x\nguards:\n  max_deleted_lines: x\n"
    assert error_of(text).startswith(f"{SOURCE}:3: merge.method:")


def test_error_names_the_given_source():
    message = error_of("version: 1\nmode: fast\n", source="repo/.github/ourobot.yml")
    assert message.startswith("repo/.github/ourobot.yml:2: mode: ")


# --- version --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# settings\nmode: light\n",
            ":2: version: missing; add `version: 1` at the top",
        ),
        ("version: 2\n", ":1: version: unsupported version 2: this ourobot reads version 1"),
        ("version: '1'\n", ":1: version: expected 1, got '1'"),
        ("version: 1.0\n", ":1: version: expected 1, got 1.0"),
        ("version: true\n", ":1: version: expected 1, got true"),
        ("version:\n", ":1: version: expected 1, got null"),
    ],
)
def test_version_must_be_exactly_1(text, expected):
    assert error_of(text) == SOURCE + expected


# --- the shape of the file ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "version: 1\nmode: light\nmode: pro\n",
            ":3: mode: duplicate key (first set on line 2); YAML would silently keep only the "
            "last value",
        ),
        (
            "version: 1\nguards:\n  secrets: true\n  apply_to: bot\n  secrets: false\n",
            ":5: guards.secrets: duplicate key (first set on line 3); YAML would silently keep "
            "only the last value",
        ),
        (
            "version: 1\nreview:\n  models:\n    - {id: 'openai:a', id: 'openai:b'}\n",
            ":4: review.models[0].id: duplicate key (first set on line 4); YAML would silently "
            "keep only the last value",
        ),
    ],
)
def test_duplicate_keys_are_refused(text, expected):
    assert error_of(text) == SOURCE + expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "- version: 1\n",
            ":1: the top level must be a mapping of keys (version, mode, guards, ...), got a list",
        ),
        (
            "\n\njust text\n",
            ":3: the top level must be a mapping of keys (version, mode, guards, ...), "
            "got 'just text'",
        ),
        ("version: 1\nguards:\n  max_deleted_lines: [1\n", ":4: YAML syntax error: "),
        ("version: 1\n  mode: pro\n", ":2: YAML syntax error: mapping values are not allowed"),
        ("version: 1\n---\nversion: 1\n", ":2: YAML syntax error: but found another document"),
        (
            "version: 1\nmode: !!python/object:os.system x\n",
            ":2: YAML: could not determine a constructor for the tag",
        ),
        ("version: 1\nmerge: !!set {a}\n", ":2: merge: unsupported YAML tag"),
        (
            "base: &b {mode: pro}\nversion: 1\nproject:\n  <<: *b\n",
            ":4: project: YAML merge keys (<<) are not supported; write keys out",
        ),
        ("version: 1\n1: x\n", ":2: key '1' is not read as a string by YAML; quote it"),
        (
            "version: 1\nguards:\n  on: true\n",
            ":3: guards: key 'on' is not read as a string by YAML; quote it",
        ),
        ("version: 1\n[a]: x\n", ":2: a key must be a plain string, not a list or mapping"),
        ("version: 1\nmode: a\x00b\n", ":2: unacceptable character #x0000"),
    ],
)
def test_malformed_yaml_is_refused_with_its_line(text, expected):
    assert error_of(text).startswith(SOURCE + expected)


def test_aliases_are_allowed_and_expanded():
    config = load(
        """\
        version: 1
        review:
          models: &panel [anthropic:a, openai:b]
        models:
          implementer: *panel
        """
    )
    assert [m.id for m in config.models.implementer] == ["anthropic:a", "openai:b"]


def test_alias_bomb_is_refused_quickly():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    message = error_of("\n".join(lines) + "\nversion: 1\n")
    assert "more than 20000 values (aliases expanded)" in message


def test_recursive_alias_is_refused():
    assert "nested too deeply" in error_of("version: 1\nmerge: &m {required_checks: [*m]}\n")


def test_deep_nesting_is_refused_without_a_traceback():
    text = "version: 1\nx:\n  " + "[" * 100_000 + "]" * 100_000 + "\n"
    assert error_of(text) == f"{SOURCE}:3: YAML nested too deeply"


def test_file_over_256_kib_is_refused():
    text = "version: 1\n" + "#" * MAX_CONFIG_BYTES + "\n"
    assert error_of(text) == (
        f"{SOURCE}: file too large ({len(text)} bytes; the limit is {MAX_CONFIG_BYTES})"
    )


def test_file_just_under_the_limit_is_read():
    padding = "#" * (MAX_CONFIG_BYTES - 100) + "\n"
    assert load_repo_config(padding + "version: 1\nmode: light\n").mode == "light"


def test_newlines_inside_keys_cannot_split_the_error_line():
    message = error_of('version: 1\n"bad\\nkey": 1\n')
    assert message.startswith(f"{SOURCE}:2: bad key: unknown key")


# --- review panel and model entries ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "version: 1\nreview:\n  models: [anthropic:a]\n",
            ":2: review.quorum: 2 approvals required but the panel has 1 model(s): it could never "
            "pass; this is a misconfiguration (lower the quorum or add models)",
        ),
        (
            "version: 1\nreview:\n  models: [anthropic:a, openai:b]\n  quorum: 3\n",
            ":4: review.quorum: 3 approvals required but the panel has 2 model(s): it could never "
            "pass; this is a misconfiguration (lower the quorum or add models)",
        ),
        (
            "version: 1\nreview:\n  quorum: 0\n",
            ":3: review.quorum: must be at least 1, got 0: a quorum of 0 passes a PR nobody "
            "approved",
        ),
        (
            "version: 1\nreview:\n  quorum: '2'\n",
            ":3: review.quorum: expected an integer, got '2'",
        ),
        (
            "version: 1\nreview:\n  models: []\n  quorum: 1\n",
            ":3: review.models: an empty list: name at least one model",
        ),
        (
            "version: 1\nreview:\n  models: [openai:gpt-5, openai:gpt-5]\n",
            ":3: review.models: 'openai:gpt-5' is listed twice; one model cannot vote twice",
        ),
        (
            "version: 1\nreview:\n  models:\n    - anthropic:a\n    - gemini:pro\n",
            ":5: review.models[1]: unknown provider 'gemini' in 'gemini:pro' "
            "(expected anthropic or openai)",
        ),
        (
            "version: 1\nmodels:\n  implementer: gpt-5\n",
            ":3: models.implementer: expected 'anthropic:<model>' or 'openai:<model>', got 'gpt-5'",
        ),
        (
            "version: 1\nmodels:\n  planner: 'openai:'\n",
            ":3: models.planner: expected 'anthropic:<model>' or 'openai:<model>', got 'openai:'",
        ),
        (
            "version: 1\nmodels:\n  scout: 'openai:gpt 5'\n",
            ":3: models.scout: model name 'gpt 5' contains whitespace",
        ),
        (
            "version: 1\nmodels:\n  scout: []\n",
            ":3: models.scout: an empty list: name at least one model",
        ),
        (
            "version: 1\nmodels:\n  scout: [5]\n",
            ":3: models.scout[0]: expected 'anthropic:<model>', 'openai:<model>' or a mapping "
            "with id (and base_url), got 5",
        ),
        (
            "version: 1\nmodels:\n  scout: {ide: 'openai:x'}\n",
            ":3: models.scout: unknown key 'ide' in a model entry (did you mean id?)",
        ),
        (
            "version: 1\nmodels:\n  scout: {base_url: 'http://127.0.0.1:1'}\n",
            ":3: models.scout: id: expected 'anthropic:<model>' or 'openai:<model>', got None",
        ),
        (
            "version: 1\nmodels:\n  scout:\n    - id: openai:x\n      base_url: ftp://h/\n",
            ":5: models.scout[0].base_url: base_url must be an http(s) URL, got 'ftp://h/'",
        ),
        (
            "version: 1\nmodels:\n  scout:\n    - id: openai:x\n      base_url: https://u:pw@h/\n",
            ":5: models.scout[0].base_url: base_url must not carry credentials; keys belong in "
            "the environment",
        ),
    ],
)
def test_review_and_model_refusals(text, expected):
    assert error_of(text) == SOURCE + expected


def test_quorum_may_equal_the_panel_size():
    config = load("version: 1\nreview:\n  models: [anthropic:a]\n  quorum: 1\n")
    assert config.review.quorum == 1


@pytest.mark.parametrize(
    ("entry", "provider", "name", "base_url"),
    [
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", None),
        ("openai:gpt-5", "openai", "gpt-5", None),
        ("openai:llama3:8b", "openai", "llama3:8b", None),
        (
            {"id": "openai:m", "base_url": "http://127.0.0.1:8000/v1"},
            "openai",
            "m",
            "http://127.0.0.1:8000/v1",
        ),
        ({"id": "anthropic:m"}, "anthropic", "m", None),
    ],
)
def test_model_ref_parses_both_entry_forms(entry, provider, name, base_url):
    ref = ModelRef.model_validate(entry)
    assert (ref.provider, ref.name, ref.base_url) == (provider, name, base_url)
    assert ref.id == f"{provider}:{name}"


@pytest.mark.parametrize(
    "entry", ["gemini:pro", "Anthropic:x", ":x", "openai", "", 3, None, ["openai:x"]]
)
def test_model_ref_refuses_bad_entries(entry):
    with pytest.raises(pydantic.ValidationError):
        ModelRef.model_validate(entry)


def test_model_ref_prints_as_written():
    assert ModelRef.model_validate("openai:x").model_dump() == "openai:x"
    entry = {"id": "openai:x", "base_url": "http://127.0.0.1:9/v1"}
    assert ModelRef.model_validate(entry).model_dump() == entry


# --- protected paths ------------------------------------------------------------------------


def test_default_protected_paths_are_the_designed_patterns():
    assert DEFAULT_PROTECTED_PATHS == (
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
    assert GOVERNANCE_PATHS == (".github/workflows/**", ".github/ourobot.yml", ".github/ourobot/**")


@pytest.mark.parametrize("mode", ["light", "advanced", "pro"])
def test_defaults_are_in_force_in_every_mode(mode):
    assert GuardsConfig().effective_protected_paths(mode) == DEFAULT_PROTECTED_PATHS


def test_replacement_list_replaces_defaults_outside_the_governance_surface():
    guards = GuardsConfig(protected_paths=("deploy/**",), extra_protected_paths=("*.tfstate",))
    assert guards.effective_protected_paths("light") == ("deploy/**", "*.tfstate")
    assert guards.effective_protected_paths("pro") == ("deploy/**", "*.tfstate", *GOVERNANCE_PATHS)


def test_advanced_mode_keeps_the_governance_surface_whatever_the_config_says():
    guards = load("version: 1\nguards:\n  protected_paths: []\n").guards
    assert guards.effective_protected_paths("advanced") == GOVERNANCE_PATHS
    # pro: the implementer may change them, and the PR then needs an admin's approval
    assert guards.effective_protected_paths("pro") == GOVERNANCE_PATHS
    assert guards.effective_protected_paths("light") == ()
    replaced = GuardsConfig(protected_paths=("deploy/**",))
    assert replaced.effective_protected_paths("advanced") == ("deploy/**", *GOVERNANCE_PATHS)


def test_extras_are_added_to_the_defaults_without_duplicates():
    guards = GuardsConfig(extra_protected_paths=("infra/**", "*.pem"))
    assert guards.effective_protected_paths("advanced") == (*DEFAULT_PROTECTED_PATHS, "infra/**")


def test_unknown_mode_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown mode 'expert'"):
        GuardsConfig().effective_protected_paths("expert")


# --- operator caps --------------------------------------------------------------------------


def test_capped_lowers_every_budget_to_the_operators_cap():
    config = load_repo_config(
        "version: 1\nbudgets: {implementer_iterations: 50, fix_iterations: 9, "
        "test_timeout_s: 9000, usd_per_ticket: 100}\nreview: {rounds: 7}\n"
    )
    settings = load_settings(
        env={},
        cap_usd_per_ticket=2.5,
        cap_implementer_iterations=4,
        cap_fix_iterations=1,
        cap_test_timeout_s=120,
        cap_review_rounds=1,
    )
    capped = config.capped(settings)
    assert budgets_of(capped) == (4, 1, 120, 2.5)
    assert capped.review.rounds == 1
    assert budgets_of(config) == (50, 9, 9000, 100.0)  # the original is untouched
    assert capped.guards == config.guards
    assert capped.review.models == config.review.models


def test_capped_never_raises_a_budget_the_repo_lowered():
    config = load_repo_config(
        "version: 1\nbudgets: {implementer_iterations: 2, fix_iterations: 0, "
        "test_timeout_s: 30, usd_per_ticket: 0.25}\nreview: {rounds: 1}\n"
    )
    capped = config.capped(load_settings(env={}))
    assert budgets_of(capped) == (2, 0, 30, 0.25)
    assert capped.review.rounds == 1
    assert capped == config


# --- files ----------------------------------------------------------------------------------


def test_missing_file_loads_defaults(tmp_path):
    assert load_repo_config_file(tmp_path / "nope.yml") == RepoConfig()


def test_file_errors_name_the_path(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_text("version: 1\nmode: turbo\n")
    with pytest.raises(ConfigError, match=rf"^{path}:2: mode: expected 'light'"):
        load_repo_config_file(path)


def test_file_with_bom_is_read(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_bytes("\ufeffversion: 1\nmode: light\n".encode())
    assert load_repo_config_file(path).mode == "light"


def test_unreadable_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=rf"^{tmp_path}: cannot read: "):
        load_repo_config_file(tmp_path)


def test_non_utf8_file_is_a_config_error(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_bytes(b"version: 1\nproject: {name: \xff}\n")
    with pytest.raises(ConfigError, match=rf"^{path}:2: not valid UTF-8$"):
        load_repo_config_file(path)


def test_oversized_file_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "ourobot.yml"
    path.write_bytes(b"version: 1\n" + b"#" * (4 * MAX_CONFIG_BYTES))
    with pytest.raises(ConfigError, match="file too large"):
        load_repo_config_file(path)


def test_a_path_argument_is_accepted_as_pathlib(tmp_path: Path):
    path = tmp_path / "ourobot.yml"
    path.write_text(FULL)
    assert load_repo_config_file(path) == load_repo_config(FULL)


def key_paths(document: dict, prefix: str = "") -> list[str]:
    paths = []
    for key, value in document.items():
        paths.append(prefix + key)
        if isinstance(value, dict):
            paths.extend(key_paths(value, f"{prefix}{key}."))
    return paths


def test_documented_complete_file_lists_every_key_at_its_default():
    doc = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text()
    block = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert load_repo_config(block) == RepoConfig()
    assert key_paths(yaml.safe_load(block)) == key_paths(RepoConfig().to_document())


# --- the implementer's keys -------------------------------------------------------------------


def test_sandbox_and_implementer_keys_load_and_are_checked():
    config = load_repo_config(
        "version: 1\nsandbox: required\nbudgets: {wall_time_s: 900}\n"
        "implementer: {plan_labels: [], test_surface_label: tests-ok}\n"
    )
    assert config.sandbox == "required"
    assert config.budgets.wall_time_s == 900
    assert config.implementer.plan_labels == ()
    assert config.implementer.test_surface_label == "tests-ok"
    wrong = error_of("version: 1\nsandbox: maybe\n")
    assert "sandbox: expected 'auto', 'required' or 'off'" in wrong
    assert "implementer.plan_label: unknown key" in error_of(
        "version: 1\nimplementer: {plan_label: [x]}\n"
    )


def test_the_operator_caps_the_wall_time_too():
    config = load_repo_config("version: 1\nbudgets: {wall_time_s: 99999}\n")
    assert config.capped(load_settings(env={}, cap_wall_time_s=600)).budgets.wall_time_s == 600


def test_the_scout_is_off_the_schedule_unless_a_repository_asks():
    assert RepoConfig().scout.every_hours is None
    assert load_repo_config("version: 1\nscout: {every_hours: 24}\n").scout.every_hours == 24
    assert load_repo_config("version: 1\nscout:\n").scout.every_hours is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [("0", "at least 1, got 0"), ('"24"', "expected an integer or null"), ("721", "at most 720")],
)
def test_a_scout_schedule_out_of_bounds_is_refused_naming_the_key(value, problem):
    with pytest.raises(ConfigError) as refused:
        load_repo_config(f"version: 1\nscout:\n  every_hours: {value}\n")
    assert "scout.every_hours" in str(refused.value) and problem in str(refused.value)
