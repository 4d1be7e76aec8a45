"""Reading the gate's state: typed access to one field at a time, failing with the field's path.

The state is plain data (parsed JSON). Nothing is validated up front: each condition reads the
fields it needs, and a field that is missing or has the wrong shape raises `Malformed`, which
fails that condition with the message. So a broken field can never pass a condition, and it
fails only the conditions that read it.

Strictness is deliberate: `1` is not `true`, `"3"` is not a number, a float is not an id, and a
value outside the documented set ("green" as a conclusion) is malformed, not "not success".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final


class Malformed(Exception):
    """A field a condition needs is missing or malformed; the message names it."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def shown(value: object) -> str:
    """A value as JSON would spell it, short and on one line."""
    if value is MISSING:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, Sequence):
        return "a list"
    return type(value).__name__


@dataclass(frozen=True)
class Field:
    """One value of the state and where it sits (`pr.head_sha`, `reviews[2].state`).

    `problem` is set when the value cannot be reached (a parent is missing or not an object):
    every read of it, or of anything below it, raises that problem.
    """

    path: str
    value: object
    problem: str | None = None

    @classmethod
    def root(cls, state: object) -> Field:
        return cls("", state)

    def _fail(self, expected: str) -> Malformed:
        if self.problem is not None:
            return Malformed(self.problem)
        if self.value is MISSING:
            return Malformed(f"{self.path} is missing")
        return Malformed(f"{self.path}: expected {expected}, got {shown(self.value)}")

    # ----- structure ----------------------------------------------------------------------------
    def get(self, name: str) -> Field:
        path = f"{self.path}.{name}" if self.path else name
        if self.problem is not None:
            return Field(path, MISSING, self.problem)
        if not isinstance(self.value, Mapping):
            where = self.path or "the state"
            if self.value is MISSING:
                return Field(path, MISSING, f"{where} is missing")
            return Field(path, MISSING, f"{where}: expected an object, got {_kind(self.value)}")
        return Field(path, self.value.get(name, MISSING))

    def items(self) -> list[Field]:
        """The entries of a list, each addressed as `path[i]`."""
        if self.problem is not None or not isinstance(self.value, list):
            raise self._fail("a list")
        return [Field(f"{self.path}[{i}]", item) for i, item in enumerate(self.value)]

    @property
    def present(self) -> bool:
        return self.problem is None and self.value is not MISSING

    # ----- scalars ------------------------------------------------------------------------------
    def boolean(self) -> bool:
        if self.problem is None and isinstance(self.value, bool):
            return self.value
        raise self._fail("true or false")

    def integer(self, *, minimum: int = 0) -> int:
        value = self.value
        if self.problem is None and type(value) is int and value >= minimum:
            return value
        raise self._fail(f"a whole number >= {minimum}")

    def text(self) -> str:
        """A non-empty string."""
        if self.problem is None and isinstance(self.value, str) and self.value:
            return self.value
        raise self._fail("a non-empty string")

    def sha(self) -> str:
        """A commit SHA: a non-empty string without whitespace, compared exactly."""
        value = self.value
        if (
            self.problem is None
            and isinstance(value, str)
            and value
            and not any(char.isspace() for char in value)
        ):
            return value
        raise self._fail("a commit SHA")

    def choice(self, choices: Sequence[str]) -> str:
        value = self.value
        if self.problem is None and isinstance(value, str) and value in choices:
            return value
        raise self._fail("one of " + ", ".join(choices))

    def is_null(self) -> bool:
        """True for an explicit null; False for any other present value; a missing field raises."""
        if self.problem is not None or self.value is MISSING:
            raise self._fail("a value or null")
        return self.value is None

    def names(self) -> tuple[str, ...]:
        """A list of non-empty strings (check names, labels)."""
        entries = self.items()
        return tuple(entry.text() for entry in entries)
