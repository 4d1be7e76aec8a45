"""Role prompts: strict `{{NAME}}` templates, with untrusted values fenced as data.

Rendering fails on a placeholder without a value (a prompt with a hole in it is a bug, not a
shorter prompt) and on a malformed one. Substitution is one pass: a value that contains
`{{...}}` stays literal. A value is either trusted text ourobot wrote (a plain `str`) or an
`Untrusted` value, which is always cleaned (hidden content stripped or revealed, secrets
redacted) and then fenced between markers carrying a digest of the fenced text, so the text
cannot forge its own end marker. There is no way to put untrusted text into a prompt unfenced
except by declaring it trusted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from app.errors import ConfigError
from prompts import prompt_dir
from reviewers.untrusted import one_line, redact, reveal_invisible, strip_hidden

UntrustedKind = Literal["prose", "code", "line"]

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_LABEL = re.compile(r"[a-z][a-z0-9-]*")


class PromptError(ConfigError):
    """A template that cannot be rendered: one line naming the template and the placeholder."""


@dataclass(frozen=True)
class Untrusted:
    """Text from outside (an issue, a diff, a file): data for the model, never instructions.

    `prose` is Markdown (hidden content is removed), `code` is shown as is with invisible
    characters made visible, `line` is a short value rendered as one quoted JSON string.
    """

    label: str
    text: str
    kind: UntrustedKind = "prose"

    def __post_init__(self) -> None:
        if not _LABEL.fullmatch(self.label):
            raise ValueError(f"label {self.label!r} must be lowercase words joined by '-'")


@dataclass(frozen=True)
class Template:
    name: str
    text: str
    source: str


def load_template(name: str, override: str | None = None, source: str | None = None) -> Template:
    """The built-in `prompts/<name>.md`, or a repository's override text for it."""
    if override is not None:
        return Template(name=name, text=override, source=source or f"{name}.md (override)")
    path = prompt_dir().joinpath(f"{name}.md")
    return Template(name=name, text=path.read_text(encoding="utf-8"), source=f"prompts/{name}.md")


def placeholders(text: str) -> list[str]:
    """The names a template uses, in order of first use."""
    return list(dict.fromkeys(match.group(1).strip() for match in _PLACEHOLDER.finditer(text)))


def render(
    template: Template,
    values: Mapping[str, str | Untrusted],
    *,
    secrets: Iterable[str] = (),
) -> str:
    """The template with every placeholder filled; `PromptError` if one has no value."""
    secret_values = tuple(secrets)
    for match in _PLACEHOLDER.finditer(template.text):
        name = match.group(1).strip()
        line = template.text.count("\n", 0, match.start()) + 1
        if not _NAME.fullmatch(name) or match.group(1) != name:
            raise PromptError(
                f"{template.source}:{line}: malformed placeholder {match.group(0)!r} "
                "(expected {{UPPER_CASE_NAME}})"
            )
        if name not in values:
            raise PromptError(f"{template.source}:{line}: no value for {{{{{name}}}}}")
    filled = {name: _fill(value, secret_values) for name, value in values.items()}
    rendered = _PLACEHOLDER.sub(lambda match: filled[match.group(1)], template.text)
    # Trusted values are ours, but a secret must not reach a model whatever carried it.
    return redact(rendered, secret_values)


def _fill(value: str | Untrusted, secrets: tuple[str, ...]) -> str:
    if isinstance(value, str):
        return value
    return fence(value, secrets=secrets)


def clean(value: Untrusted, *, secrets: Iterable[str] = ()) -> str:
    """The text a model may see of `value`, before fencing."""
    if value.kind == "code":
        text = reveal_invisible(value.text)
    elif value.kind == "line":
        text = one_line(value.text)
    else:
        text = strip_hidden(value.text)
    return redact(text, secrets)


def fence(value: Untrusted, *, secrets: Iterable[str] = ()) -> str:
    """`value` cleaned and fenced; a `line` value becomes one JSON string literal instead."""
    text = clean(value, secrets=secrets)
    if value.kind == "line":
        return json.dumps(text, ensure_ascii=False)
    digest = hashlib.sha256(f"{value.label}\0{text}".encode()).hexdigest()[:16]
    begin = f"<<<BEGIN UNTRUSTED {value.label} {digest}>>>"
    end = f"<<<END UNTRUSTED {value.label} {digest}>>>"
    if end in text:  # would need the text to contain its own digest: refuse, not trust
        raise PromptError(f"untrusted {value.label} contains its own fence marker")
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{begin}\n{body}{end}"
