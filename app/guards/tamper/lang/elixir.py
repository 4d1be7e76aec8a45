"""Elixir's tests, as ExUnit reads them: `test "name" do` and `describe "name" do`, `assert`
checks, blocks ended by `end`."""

from __future__ import annotations

import re

from app.guards.tamper.lang.lexing import Syntax
from app.guards.tamper.lang.reader import CHECKS, Language, either
from app.guards.tamper.lang.text import quoted

_NAME = quoted("'\"")

ELIXIR = Language(
    name="elixir",
    suffixes=(".ex", ".exs"),
    comment="#",
    headers=(re.compile(rf"^\s*(?:describe|test)\s+{_NAME}\s+do\b"),),
    assertions=either(*CHECKS),
    syntax=Syntax(comment=("#",), spanning=('"""', "'''"), quotes=('"', "'")),
)
