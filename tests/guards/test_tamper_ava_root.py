"""AVA's default test files, a package's own `test.js` (`src/test.js`, `source/test.js`): a
test removed from one is reported as from any test module; a `test.js` elsewhere is a source
module like any other."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

TWO = (
    "import test from 'ava';\n\ntest('adds', t => {\n\tt.is(1 + 1, 2);\n});\n\n"
    "test('red', t => {\n\tt.is(compute(), 2);\n});\n"
)
ONE = TWO.split("\n\ntest('red'")[0] + "\n"


@pytest.mark.parametrize("path", ["test.js", "src/test.js", "source/test.mjs", "test.ts"])
def test_a_test_removed_from_avas_test_js_is_reported(repo: GitRepo, path: str):
    found = tamper(repo, {path: TWO}, lambda r: r.write(path, ONE))
    assert any("test 'red' removed" in f for f in found), found


def test_a_test_js_moved_into_a_test_folder_stays_collected(repo: GitRepo):
    """debug's `test/debug-spec.js` made `test.js`, run by AVA's defaults."""
    assert (
        tamper(repo, {"test/debug-spec.js": TWO}, lambda r: r.move("test/debug-spec.js", "test.js"))
        == []
    )


def test_a_source_module_named_test_js_is_not_a_test_file(repo: GitRepo):
    source = "export const run = () => 'test';\n"
    assert (
        tamper(repo, {"lib/commands/test.js": source}, lambda r: r.remove("lib/commands/test.js"))
        == []
    )
