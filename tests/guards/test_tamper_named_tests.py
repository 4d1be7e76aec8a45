"""`test-tamper` with the whole trees: a removed test named after its subject (its own name, or
the header of a suite around it, spells the subject's words in a row) goes with that subject
when the change deletes it from the code and it is gone from the whole head tree, whatever
else the test calls on the way. Werkzeug's `TestOrderedMultiDict`, whose tests compare with a
`MultiDict` that stays, went with the deprecated `_OrderedMultiDict`. A test not named after
the deleted name, or named after one that lives on, is still reported. Every case runs the
real rule over real git."""

from __future__ import annotations

from app.guards.tamper.exemptions.named_subject import spells
from tests.guards.conftest import GitRepo, edited, tamper
from tests.guards.test_tamper_file_subjects import DATES

STRUCTURES = """\
class MultiDict(dict):
    def add(self, key, value):
        self.setdefault(key, []).append(value)


class _OrderedMultiDict(MultiDict):
    def ordered(self):
        return list(self)
"""
WITHOUT_ORDERED = STRUCTURES.split("\n\n\nclass _OrderedMultiDict")[0] + "\n"
CLASS_TESTS = """\
from pkg.structures import MultiDict, _OrderedMultiDict


def test_multidict_add():
    d = MultiDict()
    d.add("a", 1)
    assert d["a"] == [1]


class TestOrderedMultiDict:
    storage_class = _OrderedMultiDict

    def test_interface(self):
        d = self.storage_class()
        d.add("a", 1)
        assert d == MultiDict(d)
"""
KEPT = CLASS_TESTS.split("\n\n\nclass TestOrderedMultiDict")[0] + "\n"
KEPT_IMPORT = KEPT.replace("MultiDict, _OrderedMultiDict", "MultiDict")
FILES = {"pkg/__init__.py": "", "pkg/structures.py": STRUCTURES, "tests/test_ds.py": CLASS_TESTS}


def _remove_ordered(r: GitRepo) -> None:
    r.write("pkg/structures.py", WITHOUT_ORDERED)
    r.write("tests/test_ds.py", KEPT_IMPORT)


def test_a_suite_named_after_a_deleted_class_goes_with_it(repo: GitRepo):
    """The test compares with `MultiDict`, which stays; its suite's name and its class
    attribute say it is about `_OrderedMultiDict`, which is gone."""
    assert tamper(repo, FILES, _remove_ordered) == []


def test_the_suite_removed_while_its_class_stays_is_tampering(repo: GitRepo):
    assert tamper(repo, FILES, edited("tests/test_ds.py", CLASS_TESTS, KEPT)) == [
        "tests/test_ds.py:7 test 'test_interface' removed"
    ]


def test_a_class_moved_to_another_module_keeps_its_tests(repo: GitRepo):
    """The class's body lives on in `pkg/ordered.py`: moved, not gone."""

    def change(r: GitRepo) -> None:
        _remove_ordered(r)
        r.write(
            "pkg/ordered.py",
            "from pkg.structures import MultiDict\n\n\n"
            + STRUCTURES.split("\n\n\n")[1].replace("_OrderedMultiDict", "OrderedMultiDict"),
        )

    assert tamper(repo, FILES, change) == ["tests/test_ds.py:7 test 'test_interface' removed"]


def test_a_class_still_named_elsewhere_keeps_its_tests(repo: GitRepo):
    """Another module of the head still uses `_OrderedMultiDict`: not gone."""

    def change(r: GitRepo) -> None:
        r.write("pkg/structures.py", WITHOUT_ORDERED)
        r.write("pkg/forms.py", "from pkg.legacy import _OrderedMultiDict\n")
        r.write("tests/test_ds.py", KEPT_IMPORT)

    assert tamper(repo, FILES, change) == ["tests/test_ds.py:7 test 'test_interface' removed"]


DATE_TESTS = """\
from pkg.dates import legacy_parse_dates, make_sample, parse_dates


def test_parse_dates():
    assert parse_dates("a,b") == ["a", "b"]


def test_legacy_parse_dates_agrees_with_current():
    assert legacy_parse_dates("a;b") == parse_dates(make_sample())
"""
DATE_FILES = {"pkg/__init__.py": "", "pkg/dates.py": DATES, "tests/test_dates.py": DATE_TESTS}
ONE_TEST = DATE_TESTS.split("\n\n\ndef test_legacy")[0] + "\n"


def test_a_test_named_after_a_deleted_function_goes_with_it(repo: GitRepo):
    """It also calls `parse_dates` and `make_sample`, which stay: its name says it is about
    `legacy_parse_dates`, which is gone."""

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", DATES.replace(DATES.split("\n\n\n")[1] + "\n\n\n", ""))
        r.write("tests/test_dates.py", ONE_TEST.replace("legacy_parse_dates, ", ""))

    assert tamper(repo, DATE_FILES, change) == []


def test_deleting_a_helper_the_test_is_not_named_after_frees_nothing(repo: GitRepo):
    """Red-team: `make_sample` deleted, gone from the tree; the test is named after
    `legacy_parse_dates`, which stays."""

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", DATES.split("\n\n\ndef make_sample")[0] + "\n")
        r.write("tests/test_dates.py", ONE_TEST.replace(", make_sample", ""))

    assert tamper(repo, DATE_FILES, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates_agrees_with_current' removed"
    ]


def test_a_name_spelled_in_the_title_but_not_used_frees_nothing(repo: GitRepo):
    """The test is named after `legacy_parse_dates` but calls only code that stays; the
    deleted function of that name was never its subject."""
    tests = DATE_TESTS.replace('legacy_parse_dates("a;b")', '["a", "b"]').replace(
        "legacy_parse_dates, ", ""
    )

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", DATES.replace(DATES.split("\n\n\n")[1] + "\n\n\n", ""))
        r.write("tests/test_dates.py", ONE_TEST.replace("legacy_parse_dates, ", ""))

    assert tamper(repo, {**DATE_FILES, "tests/test_dates.py": tests}, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates_agrees_with_current' removed"
    ]


def test_the_function_renamed_keeps_its_named_test(repo: GitRepo):
    """`legacy_parse_dates` renamed `split_dates`, its body the same: the code lives on."""

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", DATES.replace("def legacy_parse_dates", "def split_dates"))
        r.write("tests/test_dates.py", ONE_TEST.replace("legacy_parse_dates, ", ""))

    assert tamper(repo, DATE_FILES, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates_agrees_with_current' removed"
    ]


LIB_JS = """\
function format(value) {
  return String(value);
}

function legacyFormat(value) {
  return String(value).trim();
}

module.exports = { format, legacyFormat };
"""
SPEC_JS = """\
const { format, legacyFormat } = require('../lib');
const assert = require('assert');

describe('format', () => {
  it('formats numbers', () => {
    assert.equal(format(1), '1');
  });
});

describe('legacyFormat', () => {
  it('agrees with format', () => {
    assert.equal(legacyFormat(' 1 '), format(1));
  });
});
"""


def test_a_javascript_suite_named_after_a_deleted_function_goes_with_it(repo: GitRepo):
    files = {"lib/index.js": LIB_JS, "test/format.js": SPEC_JS}

    def change(r: GitRepo) -> None:
        r.write(
            "lib/index.js",
            LIB_JS.replace(
                "function legacyFormat(value) {\n  return String(value).trim();\n}\n\n", ""
            ).replace(", legacyFormat }", " }"),
        )
        r.write(
            "test/format.js",
            SPEC_JS.split("\n\ndescribe('legacyFormat'")[0].replace(", legacyFormat }", " }")
            + "\n",
        )

    assert tamper(repo, files, change) == []


def test_spelling_reads_words_however_they_split():
    assert spells("test_ordered_multidict_is_hashable", "_OrderedMultiDict")
    assert spells("class TestOrderedMultiDict(Base):", "_OrderedMultiDict")
    assert spells("describe('legacyFormat', () => {", "legacyFormat")
    assert spells("it('renders a Legacy Format')", "legacy_format")
    assert not spells("test_ordered", "_OrderedMultiDict")
    assert not spells("test_reordered_multidict", "_OrderedMultiDict")
    assert not spells("test_ordered_multi_dictionary", "_OrderedMultiDict")


def test_a_named_test_that_also_used_a_renamed_function_is_reported(repo: GitRepo):
    """`legacy_parse_dates` is gone, but `parse_dates`, which the test also calls, was
    renamed `split_dates` in the same change: code it tested lives on."""

    def change(r: GitRepo) -> None:
        r.write(
            "pkg/dates.py",
            DATES.replace(DATES.split("\n\n\n")[1] + "\n\n\n", "").replace(
                "def parse_dates", "def split_dates"
            ),
        )
        r.write(
            "tests/test_dates.py",
            ONE_TEST.replace("legacy_parse_dates, make_sample, parse_dates", "split_dates").replace(
                'parse_dates("a,b")', 'split_dates("a,b")'
            ),
        )

    assert tamper(repo, DATE_FILES, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates_agrees_with_current' removed"
    ]


RELOADERS = """\
class BaseReload:
    def restart(self):
        return True


class WatchGodReload(BaseReload):
    def watch(self):
        return "watchgod"


class StatReload(BaseReload):
    def watch(self):
        return "stat"
"""
RELOAD_TESTS = """\
import pytest

from pkg.reload import StatReload, WatchGodReload


def _setup(cls):
    return cls()


@pytest.mark.parametrize("reloader_class", [StatReload, WatchGodReload])
def test_restarts(reloader_class):
    assert _setup(reloader_class).restart()


@pytest.mark.parametrize(
    "reloader_class",
    [WatchGodReload],
)
def test_detects_new_dirs(reloader_class):
    assert _setup(reloader_class).restart()
"""
RELOAD_FILES = {"pkg/__init__.py": "", "pkg/reload.py": RELOADERS, "tests/test_r.py": RELOAD_TESTS}


def _cases_without_watchgod(r: GitRepo) -> None:
    r.write(
        "tests/test_r.py",
        RELOAD_TESTS.split("\n\n\n@pytest.mark.parametrize(\n")[0]
        .replace("[StatReload, WatchGodReload]", "[StatReload]")
        .replace(", WatchGodReload", "")
        + "\n",
    )


def test_a_test_whose_every_case_is_a_gone_class_goes_with_it(repo: GitRepo):
    """`parametrize("reloader_class", [WatchGodReload])`, the class
    deleted; the test also runs `BaseReload`, which stays."""

    def change(r: GitRepo) -> None:
        r.write("pkg/reload.py", RELOADERS.replace(RELOADERS.split("\n\n\n")[1] + "\n\n\n", ""))
        _cases_without_watchgod(r)

    assert tamper(repo, RELOAD_FILES, change) == []


def test_a_test_whose_cases_stay_is_reported_when_removed(repo: GitRepo):
    """The same test removed while `WatchGodReload` stays."""
    assert tamper(repo, RELOAD_FILES, _cases_without_watchgod) == [
        "tests/test_r.py:12 test 'test_detects_new_dirs' removed"
    ]


def test_a_case_that_stays_beside_the_gone_one_keeps_the_test(repo: GitRepo):
    """`[StatReload, WatchGodReload]`: the test also ran on `StatReload`, which stays."""
    tests = RELOAD_TESTS.replace("[WatchGodReload],", "[StatReload, WatchGodReload],")

    def change(r: GitRepo) -> None:
        r.write("pkg/reload.py", RELOADERS.replace(RELOADERS.split("\n\n\n")[1] + "\n\n\n", ""))
        _cases_without_watchgod(r)

    assert tamper(repo, {**RELOAD_FILES, "tests/test_r.py": tests}, change) == [
        "tests/test_r.py:12 test 'test_detects_new_dirs' removed"
    ]
