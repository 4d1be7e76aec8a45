"""`test-tamper` and suites (a `describe`, a test class): a suite is not itself a test, so a
suite renamed or dropped while its tests move is not a removal, and a unittest class turned into
pytest functions is not one; while a suite skipped around moved tests, a test moved into a new
file with a skip, and a skip on a new file's suite still fail. Also skips that travel with
their test to another file, and the new skips they must not hide."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, tampered


def messages(found: list[tuple[str | None, int | None, str]]) -> list[str]:
    return [message for _, _, message in found]


def it(name: str, check: str, indent: str = "  ") -> str:
    """A Mocha test with a body of four lines, so that git sees no rename between files."""
    body = "".join(f"{indent}  expect({check}).toBe({n})\n" for n in range(4))
    return f"{indent}it('{name}', function () {{\n{body}{indent}}})\n"


def suite(name: str, *tests: str, opener: str = "describe") -> str:
    return f"{opener}('{name}', function () {{\n" + "\n".join(tests) + "})\n"


OTHER = it("other", "h()", indent="")


# -- suites are not tests ----------------------------------------------------------------------


def test_a_unittest_class_turned_into_pytest_functions_passes(repo: GitRepo):
    before = (
        "import unittest\n\n\nclass TestQuote(unittest.TestCase):\n"
        "    def test_path(self):\n        self.assertEqual(quote('/a b'), '/a%20b')\n\n"
        "    def test_query(self):\n        self.assertEqual(quote('?a b'), '?a%20b')\n"
    )
    after = (
        "def test_path():\n    assert quote('/a b') == '/a%20b'\n\n\n"
        "def test_query():\n    assert quote('?a b') == '?a%20b'\n"
    )
    found = tampered(
        repo, {"tests/test_quote.py": before}, lambda r: r.write("tests/test_quote.py", after)
    )
    assert found == []


def test_tests_moved_to_another_file_under_another_suite_pass(repo: GitRepo):
    # CreateError.spec.js deleted, its tests now under 'core::AxiosError' in a
    # new file with tests of its own (not a rename as git sees it).
    moved = [it("creates", "a()"), it("serializes", "b()")]

    def change(r: GitRepo) -> None:
        r.remove("test/createError.spec.js")
        added = [it(name, f"{name}()") for name in ("wraps", "codes", "flattens")]
        r.write("test/AxiosError.spec.js", suite("core::AxiosError", *moved, *added))

    files = {"test/createError.spec.js": suite("core::createError", *moved)}
    assert tampered(repo, files, change) == []


def test_a_suite_removed_with_its_tests_reports_the_tests(repo: GitRepo):
    before = suite("res", it("kept", "k()")) + "\n" + suite("old", it("a", "a()"), it("b", "b()"))
    after = suite("res", it("kept", "k()"))
    found = tampered(repo, {"test/res.js": before}, lambda r: r.write("test/res.js", after))
    assert messages(found) == ["test 'a' removed", "test 'b' removed"]


def test_a_new_suite_pays_only_for_the_tests_inside_it(repo: GitRepo):
    before = OTHER + "\n" + it("a", "a()", indent="") + "\n" + it("b", "b()", indent="")
    after = OTHER + "\n" + suite("new", it("c", "c()"))
    found = tampered(repo, {"test/t.js": before}, lambda r: r.write("test/t.js", after))
    assert messages(found) == ["test 'a' removed"]


def test_emptying_a_suite_that_stays_is_a_removal(repo: GitRepo):
    # The class left without tests is not a new test standing in for the one it held.
    before = (
        "def test_other():\n    assert h()\n\n\n"
        "class TestOld:\n    helper = 1\n\n    def test_a(self):\n        assert a()\n"
    )
    after = "def test_other():\n    assert h()\n\n\nclass TestOld:\n    helper = 1\n"
    found = tampered(repo, {"tests/test_t.py": before}, lambda r: r.write("tests/test_t.py", after))
    assert messages(found) == ["test 'test_a' removed"]


def test_an_empty_suite_still_counts_as_a_test(repo: GitRepo):
    # A `describe` holding no test definition we recognise is taken for a test itself.
    before = OTHER + "\ndescribe('table', function () {\n  cases.forEach(check)\n})\n"
    found = tampered(repo, {"test/t.js": before}, lambda r: r.write("test/t.js", OTHER))
    assert messages(found) == ["test 'table' removed"]


# -- skips around moved tests ------------------------------------------------------------------


def _moved_into_new_file(repo: GitRepo, new_text: str) -> list[str]:
    moved, stays = it("x", "f()", indent=""), it("y", "g()", indent="")

    def change(r: GitRepo) -> None:
        r.remove("test/a.js")
        text = new_text.replace("  MOVED", it("x", "f()")).replace("MOVED", moved)
        r.write("test/b.js", OTHER + "\n" + text)
        r.write("test/c.js", stays)

    return messages(tampered(repo, {"test/a.js": moved + "\n" + stays}, change))


def test_a_test_moved_into_a_new_file_with_a_skip_is_reported(repo: GitRepo):
    skipped = "MOVED".replace("MOVED", "it.skip" + it("x", "f()", indent="")[2:])
    assert _moved_into_new_file(repo, skipped) == ["skip marker added to a test"]


def test_a_test_moved_into_a_new_file_inside_a_skipped_suite_is_reported(repo: GitRepo):
    wrapped = "describe.skip('b', function () {\n  MOVED})\n"
    assert _moved_into_new_file(repo, wrapped) == ["skip marker added to a test"]


def test_a_skipped_suite_whose_tests_are_not_indented_still_covers_them(repo: GitRepo):
    # Where the suite ends is read from indentation; code that ignores it cannot hide a test.
    wrapped = "xdescribe('b', function () {\nMOVED})\n"
    assert _moved_into_new_file(repo, wrapped) == ["skip marker added to a test"]


def test_a_python_class_skipped_around_moved_tests_is_reported(repo: GitRepo):
    moved = "def test_x():\n    assert f() == 1\n    assert f() != 2\n    assert f() > 0\n"
    stays = "def test_y():\n    assert g() == 1\n    assert g() != 2\n    assert g() > 0\n"
    other = "def test_other():\n    assert h() == 1\n    assert h() != 2\n    assert h() > 0\n"
    wrapped = "import pytest\n\n\n@pytest.mark.skip(reason='later')\nclass TestB:\n" + "".join(
        "    " + line + "\n" for line in moved.replace("():", "(self):").splitlines()
    )

    def change(r: GitRepo) -> None:
        r.remove("tests/test_a.py")
        r.write("tests/test_b.py", other + "\n\n" + wrapped)
        r.write("tests/test_c.py", stays)

    found = tampered(repo, {"tests/test_a.py": moved + "\n\n" + stays}, change)
    assert messages(found) == ["skip marker added to a test"]


def test_a_new_file_of_new_skipped_tests_still_passes(repo: GitRepo):
    new = OTHER + "\n" + suite("later", it("z", "z()"), opener="describe.skip")
    found = tampered(repo, {"test/a.js": it("y", "g()")}, lambda r: r.write("test/b.js", new))
    assert found == []


# -- skips that travel with their test ---------------------------------------------------------

SKIPPED = "@pytest.mark.skipif(not HAS_IDNA, reason='needs idna')\ndef test_x():\n    assert f()\n"
STAYS = "def test_y():\n    assert g() == 1\n    assert g() != 2\n    assert g() > 0\n"
OTHER_PY = "def test_other():\n    assert h() == 1\n    assert h() != 2\n    assert h() > 0\n"
HEAD = "import pytest\n\n\n"


def test_a_skipped_test_moved_to_another_file_with_its_skip_passes(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_a.py", HEAD + STAYS)
        r.write("tests/test_b.py", HEAD + OTHER_PY + "\n\n" + SKIPPED)

    files = {"tests/test_a.py": HEAD + STAYS + "\n\n" + SKIPPED, "tests/test_b.py": OTHER_PY}
    assert tampered(repo, files, change) == []


def test_a_skip_that_left_with_its_test_does_not_excuse_a_new_one(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_a.py", HEAD + "@pytest.mark.skipif(SLOW, reason='slow')\n" + STAYS)
        r.write("tests/test_b.py", HEAD + OTHER_PY + "\n\n" + SKIPPED)

    files = {"tests/test_a.py": HEAD + STAYS + "\n\n" + SKIPPED, "tests/test_b.py": OTHER_PY}
    found = tampered(repo, files, change)
    assert found == [("tests/test_a.py", 4, "skip marker added to a test")]


def test_a_test_moved_with_another_skip_than_it_had_is_reported(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_a.py", HEAD + STAYS)
        other_skip = SKIPPED.replace("not HAS_IDNA", "True")
        r.write("tests/test_b.py", HEAD + OTHER_PY + "\n\n" + other_skip)

    files = {"tests/test_a.py": HEAD + STAYS + "\n\n" + SKIPPED, "tests/test_b.py": OTHER_PY}
    assert messages(tampered(repo, files, change)) == ["skip marker added to a test"]
