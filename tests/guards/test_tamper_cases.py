"""`test-tamper` with parametrized cases read from the whole files (`app.guards.tamper.counts`): a
test folded into an existing parametrized test, or a parametrized test renamed under unchanged
decorators, is not a removal; and the ways a removal could hide behind cases still fail (a case that
never runs, a case taken from another test, a bare `--diff`, an assertion padded into an existing
test)."""

from __future__ import annotations

from tests.guards.conftest import GitRepo, by_rule, diff_result, tampered
from tests.guards.test_test_tamper_moves import FOLDED

# A parametrized test whose header and decorator lines stay, and a test folded into it.
BEFORE = """\
import pytest


@pytest.mark.parametrize(
    ("raw", "quoted"),
    [
        ("/a b", "/a%20b"),
        ("?a b", "?a%20b"),
    ],
)
def test_quote(raw, quoted):
    assert quote(raw) == quoted


def test_fragment():
    assert quote("#a b") == "#a%20b"
"""


def messages(found: list[tuple[str | None, int | None, str]]) -> list[str]:
    return [message for _, _, message in found]


def change_to(text: str, path: str = "tests/test_quote.py"):
    return lambda r: r.write(path, text)


# -- not removals ------------------------------------------------------------------------------


def test_a_test_folded_as_a_case_of_an_existing_parametrized_test_passes(repo: GitRepo):
    # The header and decorator of the parametrized test are unchanged lines, so
    # only the whole file shows the case that now stands for the removed test.
    assert tampered(repo, {"tests/test_quote.py": BEFORE}, change_to(FOLDED)) == []


def test_a_parametrized_test_renamed_under_unchanged_decorators_counts_its_cases(repo: GitRepo):
    # Renamed, one case added, and a separate test folded in as that case.
    before = BEFORE.replace("def test_quote(", "def test_quote_old_name(")
    after = FOLDED.replace("def test_quote(", "def test_quote_new_name(")
    assert tampered(repo, {"tests/test_quote.py": before}, change_to(after)) == []


def test_a_test_folded_into_a_same_named_parametrized_test_passes(repo: GitRepo):
    # Test_compact and test_pretty become test_compact with two cases.
    before = (
        "def test_compact():\n    assert dumps(x, compact=True) == 'a'\n\n\n"
        "def test_pretty():\n    assert dumps(x, compact=False) == 'b'\n"
    )
    after = (
        "import pytest\n\n\n"
        '@pytest.mark.parametrize("compact", [True, False])\n'
        "def test_compact(compact):\n    assert (' ' not in dumps(x, compact=compact)) is compact\n"
    )
    assert (
        tampered(repo, {"tests/test_json.py": before}, change_to(after, "tests/test_json.py")) == []
    )


# -- still removals ----------------------------------------------------------------------------


def test_the_same_fold_given_as_a_bare_diff_is_a_removal(repo: GitRepo):
    # Without the trees only the changed lines are read: the added case is not seen.
    repo.write("tests/test_quote.py", BEFORE)
    base = repo.commit("base")
    repo.write("tests/test_quote.py", FOLDED)
    head = repo.commit("fold")
    found = by_rule(diff_result(repo.git("diff", base, head) + "\n"), "test-tamper")
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_case_that_is_skipped_pays_for_nothing(repo: GitRepo):
    skipped = FOLDED.replace(
        '        ("#a b", "#a%20b"),\n',
        '        pytest.param("#a b", "#a%20b", marks=pytest.mark.skip),\n',
    )
    found = tampered(repo, {"tests/test_quote.py": BEFORE}, change_to(skipped))
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_case_added_to_a_test_that_may_be_skipped_pays_for_nothing(repo: GitRepo):
    guarded = '@pytest.mark.skipif(not HAS_IDNA, reason="needs idna")\n@pytest.mark.parametrize('
    before = BEFORE.replace("@pytest.mark.parametrize(", guarded)
    after = FOLDED.replace("@pytest.mark.parametrize(", guarded)
    found = tampered(repo, {"tests/test_quote.py": before}, change_to(after))
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_case_added_in_a_module_skipped_as_a_whole_pays_for_nothing(repo: GitRepo):
    marker = "import pytest\n\npytestmark = pytest.mark.skipif(not HAS_IDNA, reason='x')\n"
    before = BEFORE.replace("import pytest\n", marker)
    after = FOLDED.replace("import pytest\n", marker)
    found = tampered(repo, {"tests/test_quote.py": before}, change_to(after))
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_case_moved_from_one_test_to_another_pays_for_nothing(repo: GitRepo):
    # The file's cases are netted: one gained by test_quote, one lost by test_path.
    before = BEFORE + (
        "\n\n@pytest.mark.parametrize('path', ['/a', '/b'])\n"
        "def test_path(path):\n    assert quote(path) == path\n"
    )
    after = FOLDED + (
        "\n\n@pytest.mark.parametrize('path', ['/a'])\n"
        "def test_path(path):\n    assert quote(path) == path\n"
    )
    found = tampered(repo, {"tests/test_quote.py": before}, change_to(after))
    assert messages(found) == ["test 'test_fragment' removed"]


def test_cases_a_carried_test_loses_count_against_the_new_tests(repo: GitRepo):
    # test_quote keeps its name and loses both of its cases' worth but one; a new test then
    # pays for only one of the two tests lost.
    before = BEFORE
    after = (
        "import pytest\n\n\n"
        "def test_quote():\n    assert quote('/a b') == '/a%20b'\n\n\n"
        "def test_new():\n    assert quote('') == ''\n"
    )
    found = tampered(repo, {"tests/test_quote.py": before}, change_to(after))
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_deleted_test_paid_by_an_assertion_padded_into_an_existing_test_is_a_removal(
    repo: GitRepo,
):
    # A kept test growing an `assert True` is no new test: nothing stands for the removed one.
    after = BEFORE.split("\n\n\ndef test_fragment")[0].replace(
        "    assert quote(raw) == quoted\n", "    assert quote(raw) == quoted\n    assert True\n"
    )
    found = tampered(repo, {"tests/test_quote.py": BEFORE}, change_to(after + "\n"))
    assert messages(found) == ["test 'test_fragment' removed"]


def test_a_deleted_test_paid_by_an_assertion_padded_into_another_file_is_a_removal(
    repo: GitRepo,
):
    other = "def test_other():\n    assert other() == 1\n"

    def change(r: GitRepo) -> None:
        r.write("tests/test_quote.py", BEFORE.split("\n\n\ndef test_fragment")[0] + "\n")
        r.write("tests/test_other.py", other + "    assert True\n")

    files = {"tests/test_quote.py": BEFORE, "tests/test_other.py": other}
    assert messages(tampered(repo, files, change)) == ["test 'test_fragment' removed"]
