"""Untrusted text made safe to show a model: hidden content removed or revealed, secrets redacted.

Prose (a ticket, a PR body, the constitution) is Markdown that GitHub renders: what a person
cannot see there must not reach a model either, or it becomes a channel for instructions
nobody reviewed. `strip_hidden` removes HTML comments, invisible characters (zero-width,
bidi controls, tag characters, variation selectors), image alt text and link titles.

Code is shown as it is, except that every invisible character is replaced by a visible
`<U+XXXX>` marker (`reveal_invisible`): a reviewer must *see* a bidi control in a diff
(Trojan Source) rather than have it silently removed or silently acting.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

MIN_SECRET_CHARS = 8
REDACTED = "[redacted]"

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# ![alt](...) and ![alt][ref]: the alt text is only read by screen readers, never seen.
_IMAGE_ALT = re.compile(r"!\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\](?=[(\[])")
# [text](url "title") / 'title' / (title): the title shows only on hover.
_INLINE_TITLE = re.compile(r"\]\(\s*(<[^>\n]*>|[^\s()]+)\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\))\s*\)")
# [ref]: url "title", the title on the same line or the next.
_REFERENCE_TITLE = re.compile(
    r"^( {0,3}\[[^\]\n]+\]:[ \t]*(?:<[^>\n]*>|\S+))"
    r"(?:[ \t]*\n?[ \t]*(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))[ \t]*$",
    re.MULTILINE,
)
_TAG = re.compile(r"<[A-Za-z][^<>]*>")
_HIDDEN_ATTRIBUTE = re.compile(
    r"\s(?:alt|title|aria-label)\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+)", re.IGNORECASE
)
# Characters that render as nothing but are not category Cf.
_INVISIBLE_EXTRA = frozenset(
    {"\u115f", "\u1160", "\u3164", "\uffa0", "\u034f", "\u2800"}
) | frozenset(chr(code) for code in range(0xFE00, 0xFE10))


def is_invisible(char: str) -> bool:
    """Zero-width, bidi and other format characters, variation selectors, controls (not tab or
    newline) and blank-looking fillers."""
    if char in "\n\t":
        return False
    code = ord(char)
    if 0xE0100 <= code <= 0xE01EF:  # variation selectors supplement
        return True
    return unicodedata.category(char) in {"Cf", "Cc", "Zl", "Zp"} or char in _INVISIBLE_EXTRA


def strip_hidden(text: str) -> str:
    """Prose as a person sees it rendered: no comments, invisible characters, alt or titles."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "".join("\n" if char in "\u2028\u2029" else char for char in text)
    text = _remove_invisible(text)
    # Comments go after invisible characters: `<!-\u200b-` must not survive as a comment.
    text = _COMMENT.sub("", text)
    text = _IMAGE_ALT.sub("![]", text)
    text = _INLINE_TITLE.sub(r"](\1)", text)
    text = _REFERENCE_TITLE.sub(r"\1", text)
    return _TAG.sub(lambda tag: _HIDDEN_ATTRIBUTE.sub("", tag.group(0)), text)


def _remove_invisible(text: str) -> str:
    return "".join(char for char in text if not is_invisible(char))


def reveal_invisible(text: str) -> str:
    """Code as it is, with each invisible character shown as `<U+XXXX>`."""
    if text.isascii() and all(char >= " " or char in "\n\t\r" for char in text):
        return text
    # A carriage return (CRLF files) is plain to a model and hides nothing from it.
    return "".join(
        f"<U+{ord(char):04X}>" if char != "\r" and is_invisible(char) else char for char in text
    )


def one_line(text: str, limit: int = 200) -> str:
    """A short untrusted value (a name, a title) on one visible line."""
    flat = " ".join(strip_hidden(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every known secret value replaced (long enough ones: short values would
    redact ordinary words)."""
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


_SECRET_NAME_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE")


def secrets_from_env(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of variables whose names say they are secret (API keys, tokens, passwords): a
    copy of one in a repository file must not travel to a model either."""
    return tuple(
        value
        for name, value in env.items()
        if len(value) >= MIN_SECRET_CHARS
        and any(word in name.upper() for word in _SECRET_NAME_WORDS)
    )
