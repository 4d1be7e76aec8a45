"""Ruby's test files, as RSpec, minitest and test-unit read them: `it "name" do` (or
`it("name")`), `def test_x`, `expect(...)`, `.should` and `must_` checks, `xit(`, `fit(` and
a bare `skip`, blocks ended by `end` or `}`.
"""

from __future__ import annotations

import re

from app.guards.tamper.lang.reader import CHECKS, Language, Marker, either
from app.guards.tamper.lang.text import quoted

_NAME = quoted("'\"")
# RSpec's skipped examples and groups, spelled with parentheses: `xit("name") do`.
_SKIPPED = re.compile(r"(?<![\w.$])x(?:it|test|describe|context|specify)\s*\(")

RUBY = Language(
    name="ruby",
    suffixes=(".rb", ".rake", ".ru"),
    comment="#",
    headers=(
        re.compile(rf"^\s*(?:it|describe|context|test|specify)\s+{_NAME}\s+do\b"),
        re.compile(rf"^\s*(?:x|f)?(?:it|test|describe|context|specify)\s*\(\s*{_NAME}"),
        # minitest and test-unit: a `test_` method, without parentheses.
        re.compile(r"^\s*def\s+(?P<n>test_\w*[?!]?)\s*(?:;|#|$)"),
    ),
    assertions=either(*CHECKS, r"\.should\b", r"\bmust_\w+"),
    markers=(
        Marker("defining", _SKIPPED),
        # RSpec and minitest skip with bare words, which mean something else in other
        # languages.
        Marker("body", re.compile(r"^\s*(skip|pending)(\s*\(|\s+['\"]|\s*$)"), own=True),
    ),
    focus=re.compile(r"(?<![\w.$])f(?:it|describe)\s*\("),
    suite_skip=re.compile(r"(?<![\w.$])x(?:describe|context)\s*\("),
    skipped=_SKIPPED,
)
