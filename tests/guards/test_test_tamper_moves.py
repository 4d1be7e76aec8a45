"""`test-tamper` on the ordinary refactors found in real projects (tests moved, split, merged,
renamed, folded into parametrized tests, skipped only on other platforms) and on the attacks
that hide behind each of them (a "move" into a fixture file, a padded deletion, a gutted or
skipped moved test, a skip that holds on Linux)."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tampered
from tests.guards.test_test_tamper import PY_TESTS

THREE = """\
def test_path():
    assert quote("/a b") == "/a%20b"


def test_query():
    assert quote("?a b") == "?a%20b"


def test_fragment():
    assert quote("#a b") == "#a%20b"
"""

OTHER = """\
def test_other():
    assert other() == 1
"""


def messages(found: list[tuple[str | None, int | None, str]]) -> list[str]:
    return [message for _, _, message in found]


# -- moves, splits, merges ---------------------------------------------------------------------


def test_a_test_moved_to_another_test_file_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_quote.py", THREE.split("\n\n\ndef test_fragment")[0] + "\n")
        fragment = "\n\ndef test_fragment" + THREE.split("def test_fragment")[1]
        r.write("tests/test_other.py", OTHER + "\n" + fragment)

    assert (
        tampered(repo, {"tests/test_quote.py": THREE, "tests/test_other.py": OTHER}, change) == []
    )


def test_a_test_file_split_in_two_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("tests/test_quote.py")
        first, rest = THREE.split("\n\n\ndef test_fragment")
        r.write("tests/test_quote_path.py", first + "\n")
        r.write("tests/test_quote_fragment.py", "def test_fragment" + rest)

    assert tampered(repo, {"tests/test_quote.py": THREE}, change) == []


def test_a_test_file_merged_into_another_with_renamed_tests_passes(repo: GitRepo):
    renamed = THREE.replace("def test_", "def test_quote_")

    def change(r: GitRepo) -> None:
        r.remove("tests/test_quote.py")
        r.write("tests/test_other.py", OTHER + "\n\n" + renamed)

    assert (
        tampered(repo, {"tests/test_quote.py": THREE, "tests/test_other.py": OTHER}, change) == []
    )


def test_a_merge_whose_few_leftovers_were_rewritten_is_paid_by_the_new_tests(repo: GitRepo):
    # Like httpx moving test_urlparse.py into test_url.py: most tests keep their name or body,
    # one is renamed and edited on the way (found by neither), and a new test stands for it.
    source = THREE + "\n\ndef test_userinfo():\n    assert quote('u@') == 'u%40'\n"
    moved = THREE + "\n\ndef test_userinfo_quoted():\n    assert quote('u@x') == 'u%40x'\n"

    def change(r: GitRepo) -> None:
        r.remove("tests/test_quote.py")
        r.write("tests/test_other.py", OTHER + "\n\n" + moved)

    files = {"tests/test_quote.py": source, "tests/test_other.py": OTHER}
    assert tampered(repo, files, change) == []


def test_a_test_file_renamed_into_a_fixture_folder_is_moved_out(repo: GitRepo):
    found = tampered(
        repo,
        {"tests/test_quote.py": THREE},
        lambda r: r.move("tests/test_quote.py", "tests/fixtures/quote_cases.py"),
    )
    assert found == [
        ("tests/fixtures/quote_cases.py", None, "test file moved out of the test paths")
    ]


def test_a_test_moved_into_a_fixture_folder_is_removed(repo: GitRepo):
    # Collected by name, but in a folder of material for tests: not a place tests move to.
    def change(r: GitRepo) -> None:
        r.write("tests/test_quote.py", THREE.split("\n\n\ndef test_fragment")[0] + "\n")
        r.write(
            "tests/fixtures/test_cases.py",
            "def test_fragment" + THREE.split("def test_fragment")[1],
        )

    found = tampered(repo, {"tests/test_quote.py": THREE}, change)
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_test_moved_into_a_helper_module_is_removed(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_quote.py", THREE.split("\n\n\ndef test_fragment")[0] + "\n")
        r.write("tests/helpers.py", "def test_fragment():\n    assert True\n")

    found = tampered(repo, {"tests/test_quote.py": THREE}, change)
    assert messages(found) == ["test 'test_fragment' removed"]


def test_deleting_a_test_file_and_padding_elsewhere_is_still_a_deletion(repo: GitRepo):
    padding = "".join(f"\n\ndef test_pad_{n}():\n    assert True\n" for n in range(3))

    def change(r: GitRepo) -> None:
        r.remove("tests/test_quote.py")
        r.write("tests/test_other.py", OTHER + padding)

    files = {"tests/test_quote.py": THREE, "tests/test_other.py": OTHER}
    found = tampered(repo, files, change)
    assert found == [("tests/test_quote.py", None, "test file deleted")]


def test_a_split_that_drops_one_test_is_a_deletion(repo: GitRepo):
    source = THREE + "\n\ndef test_userinfo():\n    assert quote('u@') == 'u%40'\n"

    def change(r: GitRepo) -> None:
        r.remove("tests/test_quote.py")
        r.write(
            "tests/test_a.py", "def test_path" + THREE.split("def test_path")[1].split("\n\n\n")[0]
        )
        r.write(
            "tests/test_b.py",
            "def test_query" + THREE.split("def test_query")[1].split("\n\n\n")[0],
        )
        r.write("tests/test_c.py", "def test_fragment" + THREE.split("def test_fragment")[1])

    found = tampered(repo, {"tests/test_quote.py": source}, change)
    assert found == [("tests/test_quote.py", None, "test file deleted")]


def test_a_split_found_as_a_rename_reports_the_dropped_test(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("tests/test_quote.py")
        r.write("tests/test_quote_path.py", THREE.split("\n\n\ndef test_fragment")[0] + "\n")

    found = tampered(repo, {"tests/test_quote.py": THREE}, change)
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_moved_test_that_lost_its_assertions_is_tampering(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_quote.py", THREE.split("\n\n\ndef test_fragment")[0] + "\n")
        r.write("tests/test_other.py", OTHER + '\n\ndef test_fragment():\n    quote("#a b")\n')

    files = {"tests/test_quote.py": THREE, "tests/test_other.py": OTHER}
    found = tampered(repo, files, change)
    assert found == [("tests/test_other.py", 5, "test 'test_fragment' lost all of its assertions")]


LOCATION_SPEC = """\
var request = require('supertest');

describe('location', function () {
  it('keeps encoded sequences', function (done) {
    request(app())
      .get('/')
      .expect('Location', 'https://example.com?q=%A710')
      .expect(200, done);
  });
});
"""


LOST = [("test/redirect.js", 4, "test 'keeps encoded sequences' lost all of its assertions")]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # The checking handed to a helper named like a check, one argument a line or not.
        (
            "    testRequestedRedirect(\n      app(),\n      'https://example.com?q=%A710',\n"
            "      done\n    );\n",
            [],
        ),
        ("    checkRedirect(app(), 'https://example.com?q=%A710', done);\n", []),
        # Given `done`, any other function may check nothing: a timer, a `finish` helper.
        ("    setImmediate(done);\n", LOST),
        ("    finish(done);\n", LOST),
    ],
)
def test_a_javascript_test_moved_and_handed_to_a_checking_helper(
    repo: GitRepo, body: str, expected: list[tuple[str, int, str]]
):
    def change(r: GitRepo) -> None:
        r.write("test/location.js", "describe('location', function () {\n});\n")
        r.write(
            "test/redirect.js",
            "describe('redirect', function () {\n"
            "  it('redirects', function () {});\n\n"
            "  it('keeps encoded sequences', function (done) {\n" + body + "  });\n});\n",
        )

    redirect = "describe('redirect', function () {\n  it('redirects', function () {});\n});\n"
    files = {"test/location.js": LOCATION_SPEC, "test/redirect.js": redirect}
    assert tampered(repo, files, change) == expected


GO_ARGS = """\
package p

func TestArgs(t *testing.T) {
\tif err := run(); err != nil {
\t\tt.Fatal(err)
\t}
}

func TestOther(t *testing.T) {
\tif other() != 1 {
\t\tt.Error("other")
\t}
}
"""


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("\texpectNoError(run(), t)\n", []),
        ("\trun()\n", ["test 'TestArgs' lost all of its assertions"]),
    ],
)
def test_a_moved_go_test_may_check_through_a_helper_given_t(
    repo: GitRepo, body: str, found: list[str]
):
    def change(r: GitRepo) -> None:
        r.write("args_test.go", "package p\n\n" + GO_ARGS.split("\n\n", 2)[2])
        r.write("cmd_test.go", "package p\n\nfunc TestArgs(t *testing.T) {\n" + body + "}\n")

    assert messages(tampered(repo, {"args_test.go": GO_ARGS}, change)) == found


def test_a_moved_test_with_a_skip_added_is_tampering(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.remove("tests/test_quote.py")
        r.write(
            "tests/test_moved.py",
            "import pytest\n\n\n"
            + THREE.replace("def test_query", "@pytest.mark.skip\ndef test_query"),
        )

    found = tampered(repo, {"tests/test_quote.py": THREE}, change)
    assert found == [("tests/test_moved.py", 8, "skip marker added to a test")]


# -- renames -----------------------------------------------------------------------------------


def test_a_renamed_test_with_the_same_body_passes(repo: GitRepo):
    renamed = THREE.replace("def test_query", "def test_query_is_quoted")
    found = tampered(
        repo, {"tests/test_quote.py": THREE}, lambda r: r.write("tests/test_quote.py", renamed)
    )
    assert found == []


def test_a_renamed_test_with_a_skip_added_is_tampering(repo: GitRepo):
    body = '    assert quote("?a b") == "?a%20b"\n'
    before = "import pytest\n\n\n" + OTHER + "\n\ndef test_query():\n" + body
    after = "import pytest\n\n\n" + OTHER + "\n\n@pytest.mark.skip\ndef test_query_v2():\n" + body
    found = tampered(
        repo, {"tests/test_quote.py": before}, lambda r: r.write("tests/test_quote.py", after)
    )
    assert messages(found) == ["skip marker added to a test"]


def test_renaming_a_helper_class_in_conftest_passes(repo: GitRepo):
    before = "class TestServer:\n    port = 0\n"
    after = "class LiveServer:\n    port = 0\n"
    found = tampered(
        repo, {"tests/conftest.py": before}, lambda r: r.write("tests/conftest.py", after)
    )
    assert found == []


# -- parametrization ---------------------------------------------------------------------------

FOLDED = """\
import pytest


@pytest.mark.parametrize(
    ("raw", "quoted"),
    [
        ("/a b", "/a%20b"),
        ("?a b", "?a%20b"),
        ("#a b", "#a%20b"),
    ],
)
def test_quote(raw, quoted):
    assert quote(raw) == quoted
"""


def test_folding_tests_into_one_parametrized_test_passes(repo: GitRepo):
    found = tampered(
        repo, {"tests/test_quote.py": THREE}, lambda r: r.write("tests/test_quote.py", FOLDED)
    )
    assert found == []


def test_folding_into_a_parametrized_test_with_fewer_cases_is_removal(repo: GitRepo):
    fewer = FOLDED.replace('        ("?a b", "?a%20b"),\n        ("#a b", "#a%20b"),\n', "")
    found = tampered(
        repo, {"tests/test_quote.py": THREE}, lambda r: r.write("tests/test_quote.py", fewer)
    )
    assert messages(found) == ["test 'test_path' removed", "test 'test_query' removed"]


def test_a_parametrize_list_we_cannot_read_counts_as_one_test(repo: GitRepo):
    opaque = FOLDED.split("@pytest")[0] + (
        "@pytest.mark.parametrize(('raw', 'quoted'), CASES)\n"
        "def test_quote(raw, quoted):\n    assert quote(raw) == quoted\n"
    )
    found = tampered(
        repo, {"tests/test_quote.py": THREE}, lambda r: r.write("tests/test_quote.py", opaque)
    )
    assert len(found) == 2


# -- removing tests that never ran -------------------------------------------------------------


def test_removing_tests_that_were_already_skipped_passes(repo: GitRepo):
    js = (
        "describe.skip('when code is null', function () {\n"
        "  it('throws', function () {\n    expect(f(null)).toThrow()\n  })\n"
        "})\n\n"
        "xit('old', function () {\n  expect(1).toBe(1)\n})\n\n"
        "it('kept', function () {\n  expect(2).toBe(2)\n})\n"
    )
    kept = "it('kept', function () {\n  expect(2).toBe(2)\n})\n"
    found = tampered(repo, {"test/status.js": js}, lambda r: r.write("test/status.js", kept))
    assert found == []


def test_removing_a_skipped_python_test_passes_but_an_xfail_one_does_not(repo: GitRepo):
    before = (
        "import pytest\n\n\n@pytest.mark.skip(reason='gone')\ndef test_old():\n    assert f()\n"
        "\n\n@pytest.mark.xfail(reason='bug 12')\ndef test_bug():\n    assert g()\n"
    )
    found = tampered(
        repo, {"tests/test_f.py": before}, lambda r: r.write("tests/test_f.py", "import pytest\n")
    )
    assert messages(found) == ["test 'test_bug' removed"]


def test_a_test_inside_a_skipped_suite_stays_counted_when_the_suite_runs(repo: GitRepo):
    js = (
        "describe('suite', function () {\n"
        "  it('a', function () {\n    expect(1).toBe(1)\n  })\n"
        "  it('b', function () {\n    expect(2).toBe(2)\n  })\n"
        "})\n"
    )
    fewer = js.split("  it('b'")[0] + "})\n"
    found = tampered(repo, {"test/suite.js": js}, lambda r: r.write("test/suite.js", fewer))
    assert messages(found) == ["test 'b' removed"]


# -- skips that apply only elsewhere -----------------------------------------------------------


@pytest.mark.parametrize(
    "marker",
    [
        '@pytest.mark.skipif(sys.platform == "win32", reason="posix only")',
        '@pytest.mark.skipif(sys.platform in ("win32", "cygwin"), reason="x")',
        '@pytest.mark.skipif(\n    sys.platform.startswith("darwin"),\n    reason="x",\n)',
        "@pytest.mark.skipif(\"sys.platform == 'win32'\")",
        '@pytest.mark.skipif(os.name == "nt" and slow(), reason="x")',
        '@pytest.mark.xfail(platform.system() == "Windows", reason="x")',
        '@unittest.skipUnless(sys.platform.startswith("linux"), "linux only")',
        '@pytest.mark.skipif(platform.python_implementation() == "PyPy", reason="x")',
    ],
)
def test_a_skip_on_other_platforms_only_passes(repo: GitRepo, marker: str):
    edited = PY_TESTS.replace("def test_parses", f"{marker}\ndef test_parses")
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", edited)
    )
    assert found == []


@pytest.mark.parametrize(
    "marker",
    [
        '@pytest.mark.skipif(sys.platform.startswith("linux"), reason="x")',
        '@pytest.mark.skipif(sys.platform != "win32", reason="windows only")',
        '@pytest.mark.skipif(not sys.platform == "darwin", reason="x")',
        '@pytest.mark.skipif(os.name == "posix", reason="x")',
        '@pytest.mark.skipif(True, reason="x")',
        '@pytest.mark.skipif(sys.platform == "win32" or True, reason="x")',
        '@pytest.mark.skipif(sys.version_info >= (3, 0), reason="x")',
        '@pytest.mark.skipif(not HAS_FEATURE, reason="x")',
        '@pytest.mark.skipif(os.environ.get("CI"), reason="x")',
        '@pytest.mark.skipif(sys.platform == "plan10", reason="unknown value")',
        '@unittest.skipUnless(sys.platform == "win32", "x")',
        '@pytest.mark.xfail(reason="x")',
    ],
)
def test_a_skip_that_holds_on_linux_is_tampering(repo: GitRepo, marker: str):
    edited = PY_TESTS.replace("def test_parses", f"{marker}\ndef test_parses")
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", edited)
    )
    assert messages(found) == ["skip marker added to a test"]


def test_a_body_skip_under_a_platform_check_passes(repo: GitRepo):
    go = "package p\n\nfunc TestParse(t *testing.T) {\n\tcheck(t)\n}\n"
    skipped = (
        "package p\n\nfunc TestParse(t *testing.T) {\n"
        '\tif runtime.GOOS == "windows" {\n\t\tt.Skip("posix paths")\n\t}\n\tcheck(t)\n}\n'
    )
    found = tampered(repo, {"parse_test.go": go}, lambda r: r.write("parse_test.go", skipped))
    assert found == []


@pytest.mark.parametrize(
    "guard",
    ['\tif runtime.GOOS != "windows" {', '\tif runtime.GOOS == "linux" {', "\tif true {"],
)
def test_a_body_skip_under_a_check_that_holds_on_linux_is_tampering(repo: GitRepo, guard: str):
    go = "package p\n\nfunc TestParse(t *testing.T) {\n\tcheck(t)\n}\n"
    skipped = f'package p\n\nfunc TestParse(t *testing.T) {{\n{guard}\n\t\tt.Skip("x")\n\t}}\n'
    skipped += "\tcheck(t)\n}\n"
    found = tampered(repo, {"parse_test.go": go}, lambda r: r.write("parse_test.go", skipped))
    assert messages(found) == ["skip marker added inside a test"]


def test_importorskip_in_an_existing_test_is_tampering(repo: GitRepo):
    edited = PY_TESTS.replace(
        '    assert parse("1")', '    pytest.importorskip("yaml")\n    assert parse("1")'
    )
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", edited)
    )
    assert messages(found) == ["skip marker added inside a test"]


def test_swapping_a_platform_skip_for_an_unconditional_one_is_tampering(repo: GitRepo):
    before = PY_TESTS.replace(
        "def test_parses",
        '@pytest.mark.skipif(sys.platform == "win32", reason="x")\ndef test_parses',
    )
    after = PY_TESTS.replace("def test_parses", '@pytest.mark.skip(reason="x")\ndef test_parses')
    found = tampered(
        repo, {"tests/test_parse.py": before}, lambda r: r.write("tests/test_parse.py", after)
    )
    assert messages(found) == ["skip marker added to a test"]


# -- assertions switched off in place ----------------------------------------------------------


def test_commenting_out_an_assertion_is_tampering(repo: GitRepo):
    edited = PY_TESTS.replace('    assert parse("1") == 1', '    # assert parse("1") == 1')
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", edited)
    )
    assert found == [("tests/test_parse.py", 5, "assertion commented out")]


def test_dropping_the_assert_keyword_is_tampering(repo: GitRepo):
    edited = PY_TESTS.replace('    assert parse("1") == 1', '    parse("1") == 1')
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", edited)
    )
    assert found == [("tests/test_parse.py", 5, "assert statement removed")]


def test_commenting_out_a_js_expectation_is_tampering(repo: GitRepo):
    js = "it('parses', () => {\n  expect(parse('1')).toBe(1);\n});\n"
    edited = js.replace("  expect(", "  // expect(")
    found = tampered(
        repo, {"src/parse.test.js": js}, lambda r: r.write("src/parse.test.js", edited)
    )
    assert messages(found) == ["assertion commented out"]


def test_wrapping_an_assert_over_several_lines_passes(repo: GitRepo):
    edited = PY_TESTS.replace(
        '    assert parse("1") == 1', '    assert (\n        parse("1") == 1\n    )'
    )
    found = tampered(
        repo, {"tests/test_parse.py": PY_TESTS}, lambda r: r.write("tests/test_parse.py", edited)
    )
    assert found == []


# -- new tests next to renamed ones ------------------------------------------------------------


def test_a_new_skipped_test_next_to_a_renamed_one_passes(repo: GitRepo):
    # Like flask renaming test_config_from_file to ..._json and adding a ..._toml test that
    # skips without tomllib: the skip is on a new test, not on the renamed one.
    before = "import pytest\n\n\ndef test_from_file():\n    assert load('a.json')\n"
    after = (
        "import pytest\n\n\ndef test_from_file_json():\n    assert load('a.json')\n\n\n"
        "def test_from_file_toml():\n    pytest.importorskip('tomllib')\n"
        "    assert load('a.toml')\n"
    )
    found = tampered(
        repo, {"tests/test_config.py": before}, lambda r: r.write("tests/test_config.py", after)
    )
    assert found == []


def test_a_test_renamed_in_place_and_skipped_is_tampering_despite_a_new_test(repo: GitRepo):
    before = "import pytest\n\n\ndef test_from_file():\n    assert load('a.json')\n"
    after = (
        "import pytest\n\n\ndef test_from_file_json():\n    pytest.skip('later')\n"
        "    assert load('a.json', strict=True)\n\n\n"
        "def test_from_file_toml():\n    assert load('a.toml')\n"
    )
    found = tampered(
        repo, {"tests/test_config.py": before}, lambda r: r.write("tests/test_config.py", after)
    )
    assert found == [("tests/test_config.py", 5, "skip marker added inside a test")]


# -- pytest configuration ----------------------------------------------------------------------

ADDOPTS = '[tool.pytest.ini_options]\naddopts = "--ignore src/_vendor --ignore tests/cache -q"\n'


def test_restating_the_same_narrowing_in_a_new_format_passes(repo: GitRepo):
    listed = (
        "[tool.pytest.ini_options]\naddopts = [\n"
        '    "-q",\n    "--ignore=src/_vendor",\n    "--ignore=tests/cache",\n]\n'
    )
    found = tampered(repo, {"pyproject.toml": ADDOPTS}, lambda r: r.write("pyproject.toml", listed))
    assert found == []


def test_a_narrowing_slipped_into_a_reformat_is_tampering(repo: GitRepo):
    listed = (
        "[tool.pytest.ini_options]\naddopts = [\n"
        '    "-q",\n    "--ignore=src/_vendor",\n    "--ignore=tests/cache",\n'
        '    "--ignore=tests/test_security.py",\n]\n'
    )
    found = tampered(repo, {"pyproject.toml": ADDOPTS}, lambda r: r.write("pyproject.toml", listed))
    assert found == [("pyproject.toml", 6, "test collection narrowed")]


CIBUILDWHEEL = (
    "[tool.cibuildwheel]\ntest-command = 'pytest {project} -k \"not incompatible_with_mypyc\"'\n"
)


def test_editing_a_command_around_the_same_keyword_deselection_passes(repo: GitRepo):
    # black's `-n auto` appended to a `test-command` that already deselected the same tests.
    edited = CIBUILDWHEEL.replace("mypyc\"'", "mypyc\" -n auto'")
    found = tampered(
        repo, {"pyproject.toml": CIBUILDWHEEL}, lambda r: r.write("pyproject.toml", edited)
    )
    assert found == []


def test_widening_a_keyword_deselection_is_tampering(repo: GitRepo):
    edited = CIBUILDWHEEL.replace("mypyc\"'", "mypyc and not security\" -n auto'")
    found = tampered(
        repo, {"pyproject.toml": CIBUILDWHEEL}, lambda r: r.write("pyproject.toml", edited)
    )
    assert found == [("pyproject.toml", 2, "test collection narrowed")]


def test_a_keyword_deselection_added_to_a_command_is_tampering(repo: GitRepo):
    plain = CIBUILDWHEEL.replace(' -k "not incompatible_with_mypyc"', "")
    found = tampered(
        repo, {"pyproject.toml": plain}, lambda r: r.write("pyproject.toml", CIBUILDWHEEL)
    )
    assert found == [("pyproject.toml", 2, "test collection narrowed")]


AVA_HEADER = "import test from 'ava';\nimport {add, sub} from '../index.js';\n\n"
AVA_ADDS = """\
test('adds', async (t, extra) => {
\tconst sum = add(1, 1);
\tt.is(sum, 2);
});
"""
AVA_SUBTRACTS = "\ntest('subtracts', async t => {\n\tt.is(sub(2, 1), 1);\n});\n"


@pytest.mark.parametrize(
    ("check", "found"),
    [
        # AVA's own assertions, the header no longer handing `t` on (`(t, extra)` made `t`)
        ("\tt.is(sum, 2);\n", []),
        ("\tt.deepEqual([sum], [2]);\n", []),
        # a check replaced by `t.pass()`, which checks nothing
        ("\tt.pass();\n", ["test 'adds' lost all of its assertions"]),
    ],
)
def test_an_ava_test_moved_keeps_its_checks(repo: GitRepo, check: str, found: list[str]):
    moved = AVA_ADDS.replace("async (t, extra)", "async t").replace("\tt.is(sum, 2);\n", check)

    def change(r: GitRepo) -> None:
        r.write("test/add.js", AVA_HEADER + AVA_SUBTRACTS)
        r.write("test/sum.js", AVA_HEADER + moved)

    base = {"test/add.js": AVA_HEADER + AVA_ADDS + AVA_SUBTRACTS}
    assert messages(tampered(repo, base, change)) == found


def test_an_ava_test_moved_into_a_macro_keeps_its_checks(repo: GitRepo):
    """execa's tests rewritten as `test('title', macro, ...args)`: the checks are the macro's."""
    macro = (
        "const testAdds = async (t, a, b, sum) => {\n\tt.is(add(a, b), sum);\n};\n\n"
        "test('adds', testAdds, 1, 1, 2);\n"
    )

    def change(r: GitRepo) -> None:
        r.write("test/add.js", AVA_HEADER + AVA_SUBTRACTS)
        r.write("test/sum.js", AVA_HEADER + macro)

    base = {"test/add.js": AVA_HEADER + AVA_ADDS + AVA_SUBTRACTS}
    assert messages(tampered(repo, base, change)) == []
