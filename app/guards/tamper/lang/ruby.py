"""Ruby's test files, as RSpec, minitest and test-unit read them: `it "name" do` (or
`it("name")`), `def test_x`, `expect(...)`, `.should` and `must_` checks, `xit(`, `fit(` and
a bare `skip`, blocks ended by `end` or `}`.
"""

from __future__ import annotations

import re

from app.guards.tamper.lang.lexing import Syntax
from app.guards.tamper.lang.reader import CHECKS, Language, Marker, either
from app.guards.tamper.lang.text import quoted

_NAME = quoted("'\"")
_EXAMPLES = r"(?:it|test|specify|example|scenario|its)"
_GROUPS = r"(?:describe|context|feature)"
# RSpec's skipped examples and groups, with or without parentheses: `xit("name") do`,
# `xit "name" do`, `xdescribe Calc do`.
_SKIPPED = re.compile(
    rf"^\s*(?:RSpec\.)?x(?:{_EXAMPLES}|{_GROUPS})(?:\s*\(|\s+(?=['\"A-Z:]))"
    rf"|(?<![\w.$])x(?:{_EXAMPLES}|{_GROUPS})\s*\("
)
# RSpec's metadata that skips an example or a group: `it "x", :skip do`, `skip: "later"`,
# `pending: true` (not `skip: false`).
_SKIP_METADATA = re.compile(
    rf"^\s*(?:RSpec\.)?(?:{_EXAMPLES}|{_GROUPS})\b.*,\s*(?::(?:skip|pending)\b"
    r"|(?:skip|pending):(?!\s*(?:false|nil)\b)|:(?:skip|pending)\s*=>(?!\s*(?:false|nil)\b))"
)

RUBY = Language(
    name="ruby",
    suffixes=(".rb", ".rake", ".ru"),
    comment="#",
    headers=(
        re.compile(rf"^\s*x?(?:it|describe|context|test|specify)\s+{_NAME}\s*(?:,.*)?\s+do\b"),
        re.compile(rf"^\s*(?:x|f)?(?:it|test|describe|context|specify)\s*\(\s*{_NAME}"),
        # minitest and test-unit: a `test_` method, without parentheses.
        re.compile(r"^\s*def\s+(?P<n>test_\w*[?!]?)\s*(?:;|#|$)"),
    ),
    assertions=either(*CHECKS, r"\.should\b", r"\bmust_\w+"),
    markers=(
        Marker("defining", _SKIPPED),
        Marker("defining", _SKIP_METADATA, own=True),
        # RSpec and minitest skip with bare words, which mean something else in other
        # languages.
        Marker("body", re.compile(r"^\s*(skip|pending)(\s*\(|\s+['\"]|\s*$)"), own=True),
    ),
    focus=re.compile(r"(?<![\w.$])f(?:it|describe)\s*\("),
    suite_skip=re.compile(
        rf"^\s*(?:RSpec\.)?x{_GROUPS}(?:\s*\(|\s+(?=['\"A-Z:]))|(?<![\w.$])x{_GROUPS}\s*\("
        rf"|^\s*(?:RSpec\.)?{_GROUPS}\b.*,\s*(?::skip\b|skip:(?!\s*(?:false|nil)\b))"
    ),
    skipped=_SKIPPED,
    syntax=Syntax(comment=("#",), quotes=('"', "'"), ruby=True),
)
