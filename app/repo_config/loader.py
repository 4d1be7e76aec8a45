"""Loading a repo config: text or file in, a `RepoConfig` or one `ConfigError` line out.

The error names the file, the line and the dotted key, e.g.
`.github/ourobot.yml:7: guards.max_delete_lines: unknown key (did you mean max_deleted_lines?)`.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from app.errors import ConfigError
from app.repo_config.document import (
    MAX_CONFIG_BYTES,
    KeyPath,
    YamlDocument,
    config_error,
    dotted_key,
    read_document,
)
from app.repo_config.model import RepoConfig, did_you_mean, show_value

DEFAULT_SOURCE = ".github/ourobot.yml"

# pydantic error type -> what the key expects, in the words of a YAML file.
_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "tuple_type": "a list",
    "list_type": "a list",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dict_type": "a mapping",
}


def load_repo_config(text: str | None, source: str = DEFAULT_SOURCE) -> RepoConfig:
    """Validate config text. None (no file) and an empty file mean the defaults.

    A file with any key must say `version: 1`: a future format must never be read as this one.
    """
    if text is None:
        return RepoConfig()
    document = read_document(text, source)
    data = document.data
    if data is None or data == {}:
        return RepoConfig()
    if not isinstance(data, dict):
        raise config_error(
            source,
            document.line_of(()),
            "",
            f"the top level must be a mapping of keys (version, mode, guards, ...), "
            f"got {show_value(data)}",
        )
    if "version" not in data:
        raise config_error(
            source, document.line_of(()), "version", "missing; add `version: 1` at the top"
        )
    try:
        return RepoConfig.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc, document, source) from None


def read_repo_config_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist; unreadable or too large = ConfigError."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: file too large (the limit is {MAX_CONFIG_BYTES} bytes)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not valid UTF-8") from None


def load_repo_config_file(path: Path) -> RepoConfig:
    """Load `path`; a missing file means the defaults (a repository without a config)."""
    return load_repo_config(read_repo_config_text(path), source=str(path))


def load_named_config_file(path: Path) -> RepoConfig:
    """Load a config file a person named on the command line (`--config FILE`, `config check
    FILE`): it must exist. A repository without `.github/ourobot.yml` gets the defaults, but a
    name that points nowhere is a typo, and judging with the defaults instead would hide it."""
    text = read_repo_config_text(path)
    if text is None:
        raise ConfigError(missing_named_file(path))
    return load_repo_config(text, source=str(path))


def missing_named_file(path: Path) -> str:
    """The one line every command prints for a config file it was told to read and cannot find."""
    return f"config file {path}: not found (a file named on the command line must exist)"


def _first_error(exc: ValidationError, document: YamlDocument, source: str) -> ConfigError:
    """The error nearest the top of the file, as one line."""
    errors = exc.errors(include_url=False)
    first = min(errors, key=lambda error: document.line_of(tuple(error["loc"])) or 0)
    loc: KeyPath = tuple(first["loc"])
    return config_error(source, document.line_of(loc), _key(loc, document), _message(first))


def _key(loc: KeyPath, document: YamlDocument) -> str:
    # A list index the user did not write (a single model given as a string) is left out.
    kept = [
        part
        for end, part in enumerate(loc, start=1)
        if isinstance(part, str) or loc[:end] in document.lines
    ]
    return dotted_key(tuple(kept))


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    loc: KeyPath = tuple(error["loc"])
    value = error["input"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1])
        if model is None:
            return "unknown key"
        return f"unknown key {did_you_mean(str(loc[-1]), list(model.model_fields))}"
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])
    if kind == "literal_error":
        return f"expected {ctx['expected']}, got {show_value(value)}"
    if kind == "greater_than_equal":
        return f"must be at least {_bound(ctx['ge'])}, got {show_value(value)}"
    if kind == "less_than_equal":
        return f"must be at most {_bound(ctx['le'])}, got {show_value(value)}"
    if kind == "finite_number":
        return f"must be a finite number, got {show_value(value)}"
    expected = _EXPECTED.get(kind)
    if expected is None:
        return str(error["msg"])
    if _accepts_null(loc):
        expected += " or null"
    hint = ""
    if kind == "string_type" and isinstance(value, int | float | datetime.date):
        hint = " (quote it to make it a string)"
    return f"expected {expected}, got {show_value(value)}{hint}"


def _bound(limit: object) -> object:
    # pydantic reports a float field's bound 0 as 0.0; the file's reader wrote 0.
    return int(limit) if isinstance(limit, float) and limit.is_integer() else limit


def _model_at(path: KeyPath) -> type[BaseModel] | None:
    """The config section at `path` (e.g. ("guards",) -> GuardsConfig), if it is one."""
    model: type[BaseModel] = RepoConfig
    for part in path:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


def _accepts_null(loc: KeyPath) -> bool:
    model = _model_at(loc[:-1])
    name = loc[-1] if loc else None
    if model is None or not isinstance(name, str) or name not in model.model_fields:
        return False
    return type(None) in get_args(model.model_fields[name].annotation)
