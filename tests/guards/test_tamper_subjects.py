"""`test-tamper` with the whole trees: a test removed together with the code it tested (its
subject, or its whole package) is not tampering, nor is an exact duplicate removed; a test
removed while its subject stays, is renamed or moved, or is reached past a deleted helper,
still is. Every case runs the real rule over a real git repository."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.guards.tamper.code_names import binds, is_distinctive, references
from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper

Change = Callable[[GitRepo], None]

LEGACY = '''\
import re


def parse_dates(text):
    """Dates as (year, month, day)."""
    found = re.findall(r"(\\d{4})-(\\d{2})-(\\d{2})", text)
    return [tuple(int(part) for part in date) for date in found]


def legacy_parse_dates(text):
    """The old slash format, deprecated."""
    found = re.findall(r"(\\d{2})/(\\d{2})/(\\d{4})", text)
    return [(int(y), int(m), int(d)) for d, m, y in found]
'''
WITHOUT_LEGACY = LEGACY.split("\n\n\ndef legacy_parse_dates")[0] + "\n"
TESTS = """\
from pkg.dates import legacy_parse_dates, parse_dates


def test_parse_dates():
    assert parse_dates("2024-01-02") == [(2024, 1, 2)]


def test_legacy_parse_dates():
    assert legacy_parse_dates("02/01/2024") == [(2024, 1, 2)]
"""
TESTS_WITHOUT_LEGACY = (
    TESTS.split("\n\n\ndef test_legacy_parse_dates")[0].replace(
        "import legacy_parse_dates, parse_dates", "import parse_dates"
    )
    + "\n"
)


def drop_legacy(r: GitRepo) -> None:
    r.write("pkg/dates.py", WITHOUT_LEGACY)
    r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)


BASE = {"pkg/__init__.py": "", "pkg/dates.py": LEGACY, "tests/test_dates.py": TESTS}


# -- removed with its subject: not tampering ----------------------------------------------


def test_a_test_removed_with_the_function_it_tested_passes(repo: GitRepo):
    assert tamper(repo, BASE, drop_legacy) == []


def test_the_same_change_as_a_bare_diff_is_still_a_removal(repo: GitRepo):
    """Without the trees nothing shows the function is gone everywhere: a diff gets no
    exemption."""
    for path, content in {"README.md": "x\n", **BASE}.items():
        repo.write(path, content)
    base = repo.commit("base")
    drop_legacy(repo)
    head = repo.commit("change")
    diff = repo.git("diff", base, head)
    found = by_rule(diff_result(diff + "\n"), "test-tamper")
    assert [m for _, _, m in found] == ["test 'test_legacy_parse_dates' removed"]


def test_a_test_removed_with_the_method_it_tested_passes(repo: GitRepo):
    """The class stays: it is what the removed method was defined on."""
    code = (
        "import os\n\n\nclass Installer:\n    def __init__(self, finder):\n"
        "        self.finder = finder\n\n"
        "    def install(self, reqs):\n        return list(reqs)\n\n"
        "    def _deprecation_constraint_check(self):\n"
        '        if os.environ.get("PIP_CONSTRAINT"):\n'
        '            raise RuntimeError("PIP_CONSTRAINT is deprecated")\n'
    )
    tests = (
        "from pkg.installer import Installer\n\n\n"
        "def test_install():\n    assert Installer(None).install(['a']) == ['a']\n\n\n"
        "def test_deprecation_check_passes_without_constraint():\n"
        "    installer = Installer(None)\n"
        "    installer._deprecation_constraint_check()\n"
    )

    def change(r: GitRepo) -> None:
        r.write("pkg/installer.py", code.split("\n\n    def _deprecation")[0] + "\n")
        r.write("tests/test_installer.py", tests.split("\n\n\ndef test_deprecation")[0] + "\n")

    files = {"pkg/__init__.py": "", "pkg/installer.py": code, "tests/test_installer.py": tests}
    assert tamper(repo, files, change) == []


VENV = """\
import sys


def _running_under_venv():
    return sys.prefix != getattr(sys, "base_prefix", sys.prefix)


def _running_under_legacy_virtualenv():
    # virtualenv < 20 sets sys.real_prefix
    return hasattr(sys, "real_prefix")


def virtualenv_no_global():
    if _running_under_venv():
        return False
    if _running_under_legacy_virtualenv():
        return True
    return False
"""
VENV_TESTS = """\
from pkg import venv


def test_no_global_under_venv(monkeypatch):
    monkeypatch.setattr(venv, "_running_under_venv", lambda: True)
    assert venv.virtualenv_no_global() is False


def test_no_global_under_legacy_virtualenv(monkeypatch):
    monkeypatch.setattr(venv, "_running_under_venv", lambda: False)
    monkeypatch.setattr(venv, "_running_under_legacy_virtualenv", lambda: True)
    assert venv.virtualenv_no_global() is True
"""


def test_a_test_of_a_branch_cut_out_with_its_helper_passes(repo: GitRepo):
    """The function the test calls stays, but the change cut the branch the test exercised
    (the only use of the deleted helper) out of it."""

    def change(r: GitRepo) -> None:
        r.write(
            "pkg/venv.py",
            VENV.split("\n\n\ndef _running_under_legacy")[0]
            + "\n\n\ndef virtualenv_no_global():\n    if _running_under_venv():\n"
            "        return False\n    return False\n",
        )
        r.write("tests/test_venv.py", VENV_TESTS.split("\n\n\ndef test_no_global_under_legacy")[0])

    files = {"pkg/__init__.py": "", "pkg/venv.py": VENV, "tests/test_venv.py": VENV_TESTS}
    assert tamper(repo, files, change) == []


def test_a_go_package_deleted_with_its_tests_passes(repo: GitRepo):
    files = {
        "go.mod": "module example.com/tool\n",
        "tool.go": "package tool\n\nfunc Run() int { return 1 }\n",
        "cmd/add.go": "package cmd\n\nfunc addCommand(name string) string {\n"
        '\treturn "add " + name\n}\n',
        "cmd/add_test.go": 'package cmd\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
        '\tif addCommand("x") != "add x" {\n\t\tt.Error("bad")\n\t}\n}\n',
        "cmd/helpers_test.go": 'package cmd\n\nvar fixtureName = "x"\n',
    }

    def change(r: GitRepo) -> None:
        for path in ("cmd/add.go", "cmd/add_test.go", "cmd/helpers_test.go"):
            r.remove(path)

    assert tamper(repo, files, change) == []


def test_a_javascript_function_removed_with_its_tests_passes(repo: GitRepo):
    code = (
        "'use strict';\n\nvar validators = {};\n\n"
        "function isOlderVersion(version, thanVersion) {\n"
        "  var mine = thanVersion.split('.');\n  var theirs = version.split('.');\n"
        "  return mine[0] > theirs[0];\n}\n\n"
        "validators.isOlderVersion = isOlderVersion;\n\nmodule.exports = validators;\n"
    )
    tests = (
        "var validator = require('../lib/validator');\n\n"
        "describe('validator::isOlderVersion', function () {\n"
        "  it('should return true if dest version is older', function () {\n"
        "    expect(validator.isOlderVersion('0.0.1', '1.0.0')).toEqual(true);\n  });\n});\n"
    )

    def change(r: GitRepo) -> None:
        r.write(
            "lib/validator.js",
            "'use strict';\n\nvar validators = {};\n\nmodule.exports = validators;\n",
        )
        r.remove("test/validator.spec.js")

    files = {"lib/validator.js": code, "test/validator.spec.js": tests}
    assert tamper(repo, files, change) == []


# -- the subject stays, under its name or another: still tampering ------------------------


def test_a_test_removed_while_its_subject_stays_is_tampering(repo: GitRepo):
    """Another definition goes in the same change; the removed test never used it."""

    def change(r: GitRepo) -> None:
        r.write("pkg/other.py", "")
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    files = {**BASE, "pkg/other.py": "def unused_formatter(value):\n    return str(value)\n"}
    assert tamper(repo, files, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


def test_a_subject_renamed_with_its_test_removed_is_tampering(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", LEGACY.replace("def legacy_parse_dates", "def parse_slashed"))
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    assert tamper(repo, BASE, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


def test_a_subject_moved_to_another_module_with_its_test_removed_is_tampering(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", WITHOUT_LEGACY)
        r.write("pkg/legacy.py", "import re\n\n\n" + LEGACY.split("\n\n\n", 2)[2])
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    assert tamper(repo, BASE, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


def test_a_subject_rewritten_under_a_new_name_its_callers_follow_is_tampering(repo: GitRepo):
    """Its body is new, but the line that called it comes back calling the new name."""
    cli = "from pkg.dates import legacy_parse_dates\n\n\ndef main(argv):\n"
    cli += "    return legacy_parse_dates(argv[1]) or parse_fallback(argv[1])\n"
    rewritten = WITHOUT_LEGACY + (
        "\n\ndef dates_from_slashes(text):\n"
        '    day, month, year = text.split("/")\n'
        "    return [(int(year), int(month), int(day))]\n"
    )

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", rewritten)
        r.write("pkg/cli.py", cli.replace("legacy_parse_dates", "dates_from_slashes"))
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    assert tamper(repo, {**BASE, "pkg/cli.py": cli}, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


def test_a_subject_still_imported_at_the_head_is_tampering(repo: GitRepo):
    """Deleted here, provided from elsewhere (a vendored copy, a re-export): still there."""

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", "from vendored.dates import legacy_parse_dates\n" + WITHOUT_LEGACY)
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    assert tamper(repo, BASE, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


def test_one_of_two_same_named_definitions_deleted_is_tampering(repo: GitRepo):
    """Whose `legacy_parse_dates` the test called cannot be told: the other one stays."""
    twin = "def legacy_parse_dates(text):\n    return []\n"

    def change(r: GitRepo) -> None:
        r.remove("pkg/unused.py")
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    assert tamper(repo, {**BASE, "pkg/unused.py": twin}, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


SAMPLES = "def make_sample_text():\n    return '2024-01-02'\n"
SAMPLE_TESTS = """\
from pkg.dates import parse_dates
from pkg.samples import make_sample_text


def test_parse_dates():
    assert parse_dates(make_sample_text()) == [(2024, 1, 2)]


def test_nothing():
    assert parse_dates("") == []
"""


def test_deleting_an_unrelated_helper_the_test_calls_is_tampering(repo: GitRepo):
    """The test's subject (`parse_dates`) stays untouched; only a helper it also calls is
    deleted. That helper is not what the test checks."""

    def change(r: GitRepo) -> None:
        r.remove("pkg/samples.py")
        r.write(
            "tests/test_dates.py",
            "from pkg.dates import parse_dates\n\n\n" + SAMPLE_TESTS.split("\n\n\n", 2)[2],
        )

    files = {**BASE, "pkg/samples.py": SAMPLES, "tests/test_dates.py": SAMPLE_TESTS}
    assert tamper(repo, files, change) == ["tests/test_dates.py:2 test 'test_parse_dates' removed"]


def test_deleting_a_helper_past_a_test_helper_is_tampering(repo: GitRepo):
    """The subject is reached through a helper of the test file: it is still seen."""
    tests = (
        "from pkg.dates import parse_dates\nfrom pkg.samples import make_sample_text\n\n\n"
        "def check_first_date(text, expected):\n    assert parse_dates(text)[0] == expected\n\n\n"
        "def test_first_date():\n    check_first_date(make_sample_text(), (2024, 1, 2))\n\n\n"
        "def test_other():\n    check_first_date('1999-01-01', (1999, 1, 1))\n"
    )
    kept = tests.replace("from pkg.samples import make_sample_text\n", "")
    kept = (
        kept.split("\n\n\ndef test_first_date")[0]
        + "\n\n\ndef test_other"
        + kept.split("def test_other")[1]
    )

    def change(r: GitRepo) -> None:
        r.remove("pkg/samples.py")
        r.write("tests/test_dates.py", kept)

    files = {**BASE, "pkg/samples.py": SAMPLES, "tests/test_dates.py": tests}
    # Reported at the line after it (the run of removed lines slid down, as git shows it).
    assert tamper(repo, files, change) == ["tests/test_dates.py:8 test 'test_first_date' removed"]


@pytest.mark.parametrize("name", ["get", "run", "main", "__init__", "parse", "load"])
def test_a_generic_subject_never_counts_as_removed(repo: GitRepo, name: str):
    code = f"class Job:\n    def {name}(self, value=1):\n        return value\n"
    call = f"Job().{name}(2)"
    if name == "__init__":
        call = "Job.__init__(object.__new__(Job)) is None"
    tests = (
        "from pkg.job import Job\n\n\ndef test_job():\n    assert Job() is not None\n\n\n"
        f"def test_job_{name.strip('_')}():\n    assert {call}\n"
    )

    def change(r: GitRepo) -> None:
        r.write("pkg/job.py", "class Job:\n    pass\n")
        r.write("tests/test_job.py", tests.split("\n\n\ndef test_job_")[0] + "\n")

    files = {"pkg/__init__.py": "", "pkg/job.py": code, "tests/test_job.py": tests}
    assert tamper(repo, files, change) == [
        f"tests/test_job.py:5 test 'test_job_{name.strip('_')}' removed"
    ]


def test_a_test_partly_kept_is_not_removed_with_its_subject(repo: GitRepo):
    """Its header and check go, but a line of its body stays (now the test above's): not a
    whole test removed with its code, so the usual counting applies."""
    tests = TESTS.replace(
        '    assert legacy_parse_dates("02/01/2024")',
        '    text = "02/01/2024"\n    assert legacy_parse_dates(text)',
    )
    kept = TESTS_WITHOUT_LEGACY + '    text = "02/01/2024"\n'

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", WITHOUT_LEGACY)
        r.write("tests/test_dates.py", kept)

    found = tamper(repo, {**BASE, "tests/test_dates.py": tests}, change)
    assert [line.split(" ", 1)[1] for line in found] == ["test 'test_legacy_parse_dates' removed"]


def test_a_package_whose_code_moved_elsewhere_is_still_a_deletion(repo: GitRepo):
    """The code comes back inside a larger new file (too changed for git to call it a
    rename): the package was moved, not removed."""
    body = 'package cmd\n\nfunc addCommand(name string) string {\n\treturn "add " + name\n}\n'
    files = {
        "cmd/add.go": body,
        "cmd/add_test.go": 'package cmd\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
        '\tif addCommand("x") != "add x" {\n\t\tt.Error("bad")\n\t}\n}\n',
    }
    more = "".join(f"\nfunc other{n}() int {{\n\treturn {n} * {n} + {n}\n}}\n" for n in range(12))

    def change(r: GitRepo) -> None:
        r.remove("cmd/add_test.go")
        r.remove("cmd/add.go")
        r.write("internal/commands/all.go", body.replace("package cmd", "package commands") + more)

    assert tamper(repo, files, change) == ["cmd/add_test.go:None test file deleted"]


def test_a_package_whose_code_was_renamed_away_is_still_a_deletion(repo: GitRepo):
    files = {
        "cmd/add.go": "package cmd\n\nfunc addCommand(name string) string {\n"
        '\treturn "add " + name\n}\n',
        "cmd/add_test.go": 'package cmd\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
        '\tif addCommand("x") != "add x" {\n\t\tt.Error("bad")\n\t}\n}\n',
    }

    def change(r: GitRepo) -> None:
        r.remove("cmd/add_test.go")
        r.move("cmd/add.go", "internal/add.go")

    assert tamper(repo, files, change) == ["cmd/add_test.go:None test file deleted"]


# -- duplicates ----------------------------------------------------------------------------

LOCATION = """\
describe('res', function () {
  describe('.location(url)', function () {
    it('should encode data uri', function (done) {
      var app = express()
      app.use(function (req, res) {
        res.location('data:text/javascript,export default () => { }').end();
      });

      request(app)
        .get('/')
        .expect('Location', 'data:text/javascript,export%20default%20()%20=%3E%20%7B%20%7D')
        .expect(200, done)
    })
  })
})
"""


def doubled(first: str, second: str) -> str:
    head, rest = LOCATION.split("    it(", 1)
    test = "    it(" + rest.split("\n  })\n})\n")[0] + "\n"
    return (
        head
        + test.replace("data uri", first)
        + "\n"
        + test.replace("data uri", second)
        + "  })\n})\n"
    )


def test_removing_an_exact_duplicate_passes(repo: GitRepo):
    files = {"test/res.location.js": doubled("data uri", "data uri")}
    assert tamper(repo, files, lambda r: r.write("test/res.location.js", LOCATION)) == []


def test_removing_a_duplicate_and_renaming_its_twin_passes(repo: GitRepo):
    files = {"test/res.location.js": doubled("data uri1", "data uri2")}
    assert tamper(repo, files, lambda r: r.write("test/res.location.js", LOCATION)) == []


def test_removing_a_near_duplicate_is_tampering(repo: GitRepo):
    near = doubled("data uri", "data uri2").replace("%7D')\n", "%7D ')\n", 1)
    found = tamper(
        repo, {"test/res.location.js": near}, lambda r: r.write("test/res.location.js", LOCATION)
    )
    assert len(found) == 1 and "removed" in found[0]


def test_a_duplicate_in_another_suite_does_not_count(repo: GitRepo):
    other = LOCATION.replace("'.location(url)'", "'.location(url) with a prefix'")
    suite = "  describe(" + other.split("  describe(", 1)[1].rsplit("})\n", 1)[0]
    both = LOCATION.rsplit("})\n", 1)[0] + suite + "})\n"
    only = (
        LOCATION.rsplit("})\n", 1)[0]
        + suite.replace(
            "    it(" + suite.split("    it(", 1)[1].split("\n    })\n")[0] + "\n    })\n", ""
        )
        + "})\n"
    )
    assert "with a prefix" in only and only.count("it(") == 1
    found = tamper(
        repo, {"test/res.location.js": both}, lambda r: r.write("test/res.location.js", only)
    )
    assert [line.split(" ", 1)[1] for line in found] == ["test 'should encode data uri' removed"]


def test_a_subject_moved_into_a_file_marked_binary_is_still_seen(repo: GitRepo):
    """A committed `.gitattributes` cannot hide where the subject went."""

    def change(r: GitRepo) -> None:
        r.write(".gitattributes", "pkg/blob.py -diff binary\n")
        r.write("pkg/dates.py", WITHOUT_LEGACY)
        r.write("pkg/blob.py", "def legacy_parse_dates(text):\n    return []\n")
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    assert tamper(repo, BASE, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


# -- the pieces ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "bound"),
    [
        ("def legacy_parse_dates(text):", True),
        ("from pkg.dates import legacy_parse_dates", True),
        ("    legacy_parse_dates,", True),
        ("__all__ = ['legacy_parse_dates']", True),
        ("x = legacy_parse_dates(y)", True),
        ("self.legacy_parse_dates = parser", True),
        ("# legacy_parse_dates is gone", True),
        ("x = other.legacy_parse_dates(y)", False),
        ("verify: ssl.legacy_parse_dates | bool = True", False),
        ("x = legacy_parse_dates_v2(y)", False),
    ],
)
def test_what_still_provides_a_name(line: str, bound: bool):
    assert binds(line, "legacy_parse_dates", "pkg/a.py") is bound


def test_a_python_tests_names_leave_out_locals_builtins_and_the_standard_library():
    found = references(
        [
            "@mock.patch.dict(os.environ, {'PIP_CONSTRAINT': ''})",
            "def test_check(monkeypatch, tmp_path):",
            "    installer = Installer(make_test_finder())",
            "    monkeypatch.setattr(venv, '_running_under_legacy_virtualenv', lambda: True)",
            "    assert isinstance(installer._deprecation_constraint_check(), list)",
            "    assert httpx.SSLContext() is not None",
        ],
        "tests/test_a.py",
    )
    assert found.exercised == {
        "venv",
        "Installer",
        "make_test_finder",
        "_deprecation_constraint_check",
        "SSLContext",
    }
    assert found.named == {"PIP_CONSTRAINT", "_running_under_legacy_virtualenv"}


def test_other_languages_names_are_read_by_tokens():
    found = references(
        [
            "it('should return true if dest version is older', function () {",
            "  var version = '0.0.1';",
            "  expect(validator.isOlderVersion(version, '1.0.0')).toEqual(true);",
            "});",
        ],
        "test/validator.spec.js",
    )
    assert {"isOlderVersion", "toEqual"} <= found.exercised
    assert "version" not in found.exercised and "validator" not in found.exercised


@pytest.mark.parametrize(
    ("name", "distinctive"),
    [
        ("legacy_parse_dates", True),
        ("SSLContext", True),
        ("get", False),
        ("run", False),
        ("main", False),
        ("__init__", False),
        ("_run_", False),
        ("setUp", False),
        ("len", False),
        ("ab", False),
    ],
)
def test_which_names_can_be_a_tests_subject(name: str, distinctive: bool):
    assert is_distinctive(name) is distinctive


def test_a_subject_moved_into_test_material_is_still_seen(repo: GitRepo):
    """Moved under a `testing/` folder (test material by its path): moved, not gone."""

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", WITHOUT_LEGACY)
        r.write("pkg/testing/legacy.py", "def legacy_parse_dates(text):\n    return []\n")
        r.write("tests/test_dates.py", TESTS_WITHOUT_LEGACY)

    assert tamper(repo, BASE, change) == [
        "tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"
    ]


# -- a one-line definition, and what a removed test names besides its subject -------------

EXECA_INDEX = """\
import {createExeca} from './lib/create.js';
import {mapCommandAsync} from './lib/command.js';

export const execa = createExeca(() => ({}));
export const execaCommand = createExeca(mapCommandAsync);
"""
EXECA_TESTS = """\
import test from 'ava';
import {execa, execaCommand} from '../index.js';

test('execa()', async t => {
\tconst {stdout} = await execa('echo.js', ['foo']);
\tt.is(stdout, 'foo');
});

test('execaCommand()', async t => {
\tconst {stdout} = await execaCommand('echo.js foo');
\tt.is(stdout, 'foo');
});
"""
EXECA = {
    "index.js": EXECA_INDEX,
    "lib/create.js": "export const createExeca = map => (...args) => map(args);\n",
    "lib/command.js": "export const mapCommandAsync = ({file}) => ({file});\n",
    "test/command.js": EXECA_TESTS,
    # A guide's example binds `stdout` too: no code of the project's.
    "docs/bash.md": "```js\nconst stdout = await $`zip -r - input.txt`.buffer();\n```\n",
}
EXECA_TEST_GONE = "test/command.js:7 test 'execaCommand()' removed"


def drop_execa_command(
    index: str = EXECA_INDEX.replace(
        "export const execaCommand = createExeca(mapCommandAsync);\n", ""
    ),
) -> Change:
    """`execaCommand()` removed, a one-line definition, with its tests."""

    def change(r: GitRepo) -> None:
        r.write(
            "index.js", index.replace("import {mapCommandAsync} from './lib/command.js';\n", "")
        )
        r.remove("lib/command.js")
        r.write("test/command.js", EXECA_TESTS.split("\n\ntest('execaCommand()'")[0] + "\n")

    return change


def test_a_one_line_definition_removed_with_its_tests_passes(repo: GitRepo):
    assert tamper(repo, EXECA, drop_execa_command()) == []


def test_a_one_line_definition_brought_back_under_another_name_is_tampering(repo: GitRepo):
    renamed = EXECA_INDEX.replace("export const execaCommand", "export const execaCmd")
    assert tamper(repo, EXECA, drop_execa_command(renamed)) == [EXECA_TEST_GONE]


def test_a_one_line_definition_too_short_to_compare_counts_as_moved(repo: GitRepo):
    index = EXECA_INDEX.replace(
        "const execaCommand = createExeca(mapCommandAsync);", "let execaCommand;"
    )
    files = {**EXECA, "index.js": index}
    kept = index.replace("export let execaCommand;\n", "")
    assert tamper(repo, files, drop_execa_command(kept)) == [EXECA_TEST_GONE]


def test_a_removed_test_that_also_used_project_code_that_stays_is_tampering(repo: GitRepo):
    """`stdout` defined in the project's code, not only in a guide; the test's title does not
    name `execaCommand` (a test named after its gone subject goes whatever else it calls:
    `test_tamper_named_tests`)."""
    files = {
        **EXECA,
        "lib/create.js": EXECA["lib/create.js"] + "export const stdout = 1;\n",
        "test/command.js": EXECA_TESTS.replace("'execaCommand()'", "'a command string'"),
    }
    assert tamper(repo, files, drop_execa_command()) == [
        "test/command.js:7 test 'a command string' removed"
    ]


def test_a_removed_test_named_after_its_gone_subject_goes_whatever_else_it_uses(repo: GitRepo):
    files = {**EXECA, "lib/create.js": EXECA["lib/create.js"] + "export const stdout = 1;\n"}
    assert tamper(repo, files, drop_execa_command()) == []


FLAGGED = '''\
import sys

PY_3_10_PLUS = sys.version_info[:2] >= (3, 10)


def match_args(cls):
    """The names a class matches positionally."""
    return getattr(cls, "__match_args__", ())
'''
FLAGGED_TESTS = """\
import pytest

from pkg.compat import PY_3_10_PLUS, match_args


def test_match_args():
    assert match_args(int) == ()


@pytest.mark.skipif(
    PY_3_10_PLUS, reason="Pre-3.10 only."
)
def test_match_args_pre_310():
    assert match_args(object) == ()
"""


def test_a_flag_a_removed_test_is_skipped_on_is_not_its_subject(repo: GitRepo):
    """The flag is deleted and gone, but the test was about `match_args`, which stays; and
    the project still supports the Pythons the test ran on."""
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\nrequires-python = ">=3.9"\n',
        "pkg/__init__.py": "",
        "pkg/compat.py": FLAGGED,
        "tests/test_compat.py": FLAGGED_TESTS,
    }

    def change(r: GitRepo) -> None:
        r.write(
            "pkg/compat.py", FLAGGED.replace("PY_3_10_PLUS = sys.version_info[:2] >= (3, 10)\n", "")
        )
        kept = FLAGGED_TESTS.split("\n\n@pytest.mark.skipif(")[0] + "\n"
        r.write("tests/test_compat.py", kept.replace("PY_3_10_PLUS, ", ""))

    assert tamper(repo, files, change) == [
        "tests/test_compat.py:8 test 'test_match_args_pre_310' removed"
    ]


# -- own code replaced by a library's ------------------------------------------------------

HELP = """\
export class Help {
  displayWidth(str) {
    return stripColor(str).length;
  }
}

export function stripColor(str) {
  // eslint-disable-next-line no-control-regex
  const sgrPattern = /\\x1b\\[\\d*(;\\d*)*m/g;
  return str.replace(sgrPattern, '');
}
"""
STRIP_TESTS = """\
import { stripColor } from '../lib/help.js';

test('plain string is unchanged', () => {
  expect(stripColor('hello')).toEqual('hello');
});

test('bold is stripped', () => {
  expect(stripColor('\\x1b[1mhello\\x1b[22m')).toEqual('hello');
});
"""


def retarget_strip_color(to: str, defined: str = "") -> Change:
    """Its own `stripColor` replaced by node's `stripVTControlCharacters`
    at every call, and its test file deleted."""

    def change(r: GitRepo) -> None:
        head = HELP.split("\nexport function stripColor")[0]
        head = head.replace("return stripColor(str)", f"return {to}(str)")
        imported = "" if defined else f"import {{ {to} }} from 'node:util';\n"
        r.write("lib/help.js", f"{imported}{defined}\n{head}")
        r.remove("tests/help.stripAnsi.test.js")

    return change


STRIP = {"lib/help.js": HELP, "tests/help.stripAnsi.test.js": STRIP_TESTS}


def test_own_code_replaced_by_a_library_function_goes_with_its_tests(repo: GitRepo):
    assert tamper(repo, STRIP, retarget_strip_color("stripVTControlCharacters")) == []


def test_own_code_retargeted_to_another_function_of_the_project_is_tampering(repo: GitRepo):
    """The name in its place is defined in the project: the code may live on there."""
    own = (
        "\nexport function removeStyles(text) {\n  return text.replace(/\\x1b\\[\\d*m/g, '');\n}\n"
    )
    found = tamper(repo, STRIP, retarget_strip_color("removeStyles", own))
    assert found == ["tests/help.stripAnsi.test.js:None test file deleted"]


# -- a one-line definition that only named code that stays, and a rename at an import ----------

ALIASED = LEGACY + "\n\nold_parse_dates = parse_dates\n"
ALIAS_TESTS = """\
from pkg.dates import old_parse_dates


def test_old_parse_dates():
    assert old_parse_dates("2024-01-02") == [(2024, 1, 2)]


def test_other():
    assert 1 + 1 == 2
"""


def test_an_alias_removed_with_its_tests_while_the_code_it_named_stays_is_tampering(
    repo: GitRepo,
):
    """`old_parse_dates = parse_dates` goes with the only test of `parse_dates`: the test ran
    `parse_dates`, which stays."""
    files = {"pkg/__init__.py": "", "pkg/dates.py": ALIASED, "tests/test_dates.py": ALIAS_TESTS}

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", LEGACY)
        r.write("tests/test_dates.py", "\n\ndef test_other():\n    assert 1 + 1 == 2\n")

    assert tamper(repo, files, change) == [
        "tests/test_dates.py:1 test 'test_old_parse_dates' removed"
    ]


def test_a_javascript_alias_removed_while_its_code_stays_is_tampering(repo: GitRepo):
    index = EXECA_INDEX + "export const execaLegacy = execa;\n"
    tests = EXECA_TESTS.replace("execaCommand", "execaLegacy").replace(
        "'echo.js foo'", "'echo.js', ['foo']"
    )
    files = {**EXECA, "index.js": index, "test/command.js": tests}

    def change(r: GitRepo) -> None:
        r.write("index.js", EXECA_INDEX)
        r.write("test/command.js", tests.split("\n\ntest('execaLegacy()'")[0] + "\n")

    assert tamper(repo, files, change) == ["test/command.js:7 test 'execaLegacy()' removed"]


def test_a_one_line_definition_renamed_and_reworded_is_tampering(repo: GitRepo):
    """`execaCommand` comes back as `runCommand` with another argument: no line comes back
    with only the name changed, but everything the line ran stays."""
    renamed = EXECA_INDEX.replace(
        "export const execaCommand = createExeca(mapCommandAsync);",
        "export const runCommand = createExeca(mapCommandAsync, {});",
    )

    def change(r: GitRepo) -> None:
        r.write("index.js", renamed)
        r.write("test/command.js", EXECA_TESTS.split("\n\ntest('execaCommand()'")[0] + "\n")

    assert tamper(repo, EXECA, change) == [EXECA_TEST_GONE]


FORMAT = '''\
def fancy_format(value):
    """Formats a value for display."""
    cleaned = str(value).strip()
    return cleaned.upper() + "!"


def show(value):
    printed = fancy_format(value)
    return printed
'''
FORMAT_IMPL = '''\
def real_format(value):
    """Formats."""
    text = str(value).strip()
    return text.upper() + "!"
'''
FORMAT_TESTS = """\
from pkg.fmt import fancy_format, show


def test_show():
    assert show(1) == "1!"


def test_fancy_format():
    assert fancy_format(" a ") == "A!"
"""


@pytest.mark.parametrize("module", ["pkg.impl", ".impl"])
def test_code_renamed_where_it_is_imported_is_still_the_projects(repo: GitRepo, module: str):
    """`fancy_format` rewritten as `pkg/impl.py`'s `real_format`, which its caller imports as
    `nice_fmt`: the name in its place is the project's own code, imported under another name,
    not a library's."""
    files = {
        "pkg/__init__.py": "",
        "pkg/fmt.py": FORMAT,
        "pkg/impl.py": FORMAT_IMPL,
        "tests/test_fmt.py": FORMAT_TESTS,
    }

    def change(r: GitRepo) -> None:
        r.write(
            "pkg/fmt.py",
            f"from {module} import real_format as nice_fmt\n\n\n"
            "def show(value):\n    printed = nice_fmt(value)\n    return printed\n",
        )
        kept = FORMAT_TESTS.split("\n\n\ndef test_fancy_format")[0]
        r.write("tests/test_fmt.py", kept.replace("fancy_format, ", "") + "\n")

    assert tamper(repo, files, change) == ["tests/test_fmt.py:5 test 'test_fancy_format' removed"]


def test_a_library_function_imported_under_another_name_is_no_rename(repo: GitRepo):
    """commander's `stripColor` replaced by node's function imported as `strip`: still a
    library's, so the project's code went with its tests."""

    def change(r: GitRepo) -> None:
        head = HELP.split("\nexport function stripColor")[0]
        head = head.replace("return stripColor(str)", "return strip(str)")
        imported = "import { stripVTControlCharacters as strip } from 'node:util';\n"
        r.write("lib/help.js", f"{imported}\n{head}")
        r.remove("tests/help.stripAnsi.test.js")

    assert tamper(repo, STRIP, change) == []


LOCAL_IMPORT_TESTS = """\
def test_parse_dates():
    from pkg.dates import parse_dates

    assert parse_dates("2024-01-02") == [(2024, 1, 2)]


def test_legacy_parse_dates():
    from pkg.dates import legacy_parse_dates as parse

    assert parse("02/01/2024") == [(2024, 1, 2)]
"""


def test_a_subject_imported_inside_the_test_is_its_subject(repo: GitRepo):
    """`from xdist.remote import remote_initconfig` in the test's
    body, the function deleted with it. What the import binds is the test's own; what it
    imports is the project's code the test runs."""
    files = {**BASE, "tests/test_dates.py": LOCAL_IMPORT_TESTS}

    def change(r: GitRepo) -> None:
        r.write("pkg/dates.py", WITHOUT_LEGACY)
        r.write("tests/test_dates.py", LOCAL_IMPORT_TESTS.split("\n\n\ndef test_legacy")[0] + "\n")

    assert tamper(repo, files, change) == []


def test_a_test_importing_its_subject_inside_is_reported_when_the_subject_stays(repo: GitRepo):
    files = {**BASE, "tests/test_dates.py": LOCAL_IMPORT_TESTS}

    def change(r: GitRepo) -> None:
        r.write("tests/test_dates.py", LOCAL_IMPORT_TESTS.split("\n\n\ndef test_legacy")[0] + "\n")

    assert [m.split(" ", 1)[1] for m in tamper(repo, files, change)] == [
        "test 'test_legacy_parse_dates' removed"
    ]


def test_names_imported_inside_a_test_from_the_standard_library_are_not_the_projects():
    found = references(
        [
            "def test_x():",
            "    from os.path import joinpaths",
            "    from pkg.remote import remote_initconfig",
            "    from . import helpers_module",
            "    assert remote_initconfig(joinpaths)",
        ],
        "tests/test_x.py",
    )
    assert {"remote_initconfig", "helpers_module"} <= found.exercised
    assert "joinpaths" not in found.exercised


@pytest.mark.parametrize(
    ("mention", "kept"),
    [
        ("# legacy_parse_dates was dropped in 2.0\n", False),
        ("NOTE = 'use parse_dates, not legacy_parse_dates'\n", True),
        ("handler = legacy_parse_dates  # the old one\n", True),
    ],
)
def test_a_comment_line_provides_no_subject_a_string_or_code_does(
    repo: GitRepo, mention: str, kept: bool
):
    """`csrf` left only in a comment of the head's code. A comment runs
    and defines nothing; a string may be looked up by name, and code uses it."""

    def change(r: GitRepo) -> None:
        drop_legacy(r)
        r.write("pkg/notes.py", mention)

    expected = ["tests/test_dates.py:5 test 'test_legacy_parse_dates' removed"] if kept else []
    assert tamper(repo, BASE, change) == expected
