"""Removed tests that could only pass (`app.guards.tamper.exemptions.vacuous`): an AVA test whose
body is `t.pass()` goes without a finding; the same shape under another runner, or any test that
checks something, is still reported."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

PLACEHOLDER = "test('x', t => {\n\tt.pass();\n});\n"
REAL = "test('adds', t => {\n\tt.is(add(1, 1), 2);\n});\n"
AVA = "import test from 'ava';\nimport add from '../index.js';\n\n"


def _removing(repo: GitRepo, header: str, removed: str) -> list[str]:
    files = {
        "index.js": "export default (a, b) => a + b;\n",
        "test/add.js": header + REAL + removed,
    }
    return tamper(repo, files, lambda r: r.write("test/add.js", header + REAL))


@pytest.mark.parametrize(
    "placeholder",
    [
        PLACEHOLDER,
        "test.serial('x', async (t) => {\n\tt.pass()\n})\n",
        "test('x', function (t) {\n  t.pass();\n});\n",
    ],
)
def test_an_ava_test_that_only_passes_goes_without_a_finding(repo: GitRepo, placeholder: str):
    """got's `test('x', t => { t.pass(); })`, removed when Node 16 became the floor."""
    assert _removing(repo, AVA, placeholder) == []


def test_required_ava_counts_too(repo: GitRepo):
    header = "const test = require('ava');\nconst add = require('../index.js');\n\n"
    assert _removing(repo, header, PLACEHOLDER) == []


@pytest.mark.parametrize(
    ("header", "removed"),
    [
        # Jest hands a one-parameter test `done`: `done.pass()` throws, the test failed
        ("import add from '../index.js';\n\n", PLACEHOLDER),
        # tape's test never ends without `t.end()`
        ("import test from 'tape';\nimport add from '../index.js';\n\n", PLACEHOLDER),
        # AVA fails a test that makes no assertion: an empty one could be red
        (AVA, "test('x', t => {\n});\n"),
        # a pass after a check is a check
        (AVA, "test('x', t => {\n\tt.is(add(1, 1), 3);\n\tt.pass();\n});\n"),
        # the pass of another object
        (AVA, "test('x', t => {\n\tother.pass();\n});\n"),
        # `test` rebound: not surely AVA's
        (AVA + "const test = wrap;\n", PLACEHOLDER),
        (AVA.replace("test from", "test, {serial} from"), PLACEHOLDER),
    ],
)
def test_a_removed_test_that_may_fail_is_reported(repo: GitRepo, header: str, removed: str):
    assert any("test 'x' removed" in found for found in _removing(repo, header, removed))
