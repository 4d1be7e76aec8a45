"""`test-tamper` and a test moved in two steps: copied into another test file by one commit,
deleted from its old file by the next (click's `test_confirm_repeat`). The second removes a
test whose exact twin, same name, same function, same imports, runs on in a file the change
leaves alone: nothing is lost. A twin that differs in anything that could change what it
tests, or that may not run, excuses nothing. Real rule, real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

KEPT = """\
def test_kept(runner):
    assert runner.invoke(cli).exit_code == 0
"""
REPEAT = """\
def test_confirm_repeat(runner):
    cli = click.Command("cli", params=[click.Option(["--a/--no-a"], prompt=True)])
    result = runner.invoke(cli, input="\\ny\\n")
    assert result.output == "A [y/n]: \\nError: invalid input\\nA [y/n]: y\\n"
"""
UTILS = f"import click.utils\n\n\n{KEPT}\n\n{REPEAT}"
CONFIRM = f"import click\n\n\n{REPEAT}"
FILES = {"tests/test_utils.py": UTILS, "tests/prompts/test_confirm.py": CONFIRM}
REMOVED = ["tests/test_utils.py:5 test 'test_confirm_repeat' removed"]


def drop(r: GitRepo) -> None:
    r.write("tests/test_utils.py", f"import click.utils\n\n\n{KEPT}")


def test_deleting_a_copy_that_runs_on_in_another_file_passes(repo: GitRepo):
    assert tamper(repo, FILES, drop) == []


def test_deleting_a_file_whose_tests_all_run_on_elsewhere_passes(repo: GitRepo):
    files = {**FILES, "tests/test_prompts.py": f"import click\n\n\n{REPEAT}"}
    assert tamper(repo, files, lambda r: r.remove("tests/test_prompts.py")) == []


@pytest.mark.parametrize(
    ("twin", "why"),
    [
        (CONFIRM.replace("import click\n", "import other as click\n"), "another click"),
        (CONFIRM.replace("import click\n", "from pkg import click\n"), "another click"),
        (CONFIRM + "\n\nclick = None\n", "click rebound"),
        (CONFIRM.replace("invalid input", "bad input"), "another body"),
        (CONFIRM.replace("def test", "@pytest.mark.skip\ndef test"), "a skip of its own"),
        ("import click\nimport pytest\n\npytestmark = pytest.mark.skip\n\n\n" + REPEAT, "skipped"),
        ("import pytest\n\npytest.importorskip('x')\nimport click\n\n\n" + REPEAT, "skipped"),
        (CONFIRM.replace("(runner)", "(runner, tmp_path)"), "another fixture"),
        (CONFIRM + "\n\n@pytest.fixture\ndef runner():\n    return None\n", "its own runner"),
        ("from click import *\n\n\n" + REPEAT, "a star import"),
        (
            CONFIRM + "\n\n@pytest.fixture(autouse=True)\ndef fake(monkeypatch):\n    pass\n",
            "an autouse fixture",
        ),
        (CONFIRM + "\n\ndef setup_module():\n    pass\n", "a setup hook"),
        (
            CONFIRM.replace(REPEAT, "class TestConfirm:\n    " + REPEAT.replace("\n", "\n    ")),
            "a method",
        ),
    ],
)
def test_a_twin_that_may_test_something_else_excuses_nothing(repo: GitRepo, twin: str, why: str):
    assert tamper(repo, {**FILES, "tests/prompts/test_confirm.py": twin}, drop) == REMOVED, why


def test_the_original_s_own_imports_count_too(repo: GitRepo):
    utils = UTILS.replace("import click.utils\n", "import click.utils\nfrom pkg import click\n")

    def change(r: GitRepo) -> None:
        r.write("tests/test_utils.py", f"import click.utils\nfrom pkg import click\n\n\n{KEPT}")

    found = tamper(repo, {**FILES, "tests/test_utils.py": utils}, change)
    assert found == ["tests/test_utils.py:6 test 'test_confirm_repeat' removed"]


def test_a_twin_under_a_conftest_of_its_own_excuses_nothing(repo: GitRepo):
    files = {**FILES, "tests/prompts/conftest.py": "import pytest\n"}
    assert tamper(repo, files, drop) == REMOVED


def test_a_twin_the_change_edits_excuses_nothing(repo: GitRepo):
    def change(r: GitRepo) -> None:
        drop(r)
        r.write("tests/prompts/test_confirm.py", CONFIRM + "\n\ndef test_more():\n    pass\n")

    assert tamper(repo, FILES, change) == REMOVED


def test_a_twin_in_a_helper_file_is_not_a_test(repo: GitRepo):
    files = {"tests/test_utils.py": UTILS, "tests/helpers.py": CONFIRM}
    assert tamper(repo, files, drop) == REMOVED


def test_a_twin_relatively_imported_from_another_folder_excuses_nothing(repo: GitRepo):
    relative = "from . import click\n\n\n" + REPEAT
    files = {
        "tests/test_utils.py": UTILS.replace("import click.utils\n", "from . import click\n"),
        "tests/prompts/test_confirm.py": relative,
    }

    def change(r: GitRepo) -> None:
        r.write("tests/test_utils.py", f"from . import click\n\n\n{KEPT}")

    assert tamper(repo, files, change) == REMOVED


def test_a_decorated_twin_runs_on_too(repo: GitRepo):
    decorated = REPEAT.replace(
        "def test_confirm_repeat(runner):",
        '@pytest.mark.parametrize("n", [1, 2])\ndef test_confirm_repeat(runner, n):',
    )
    files = {
        "tests/test_utils.py": f"import click.utils\nimport pytest\n\n\n{KEPT}\n\n{decorated}",
        "tests/prompts/test_confirm.py": f"import click\nimport pytest\n\n\n{decorated}",
    }

    def change(r: GitRepo) -> None:
        r.write("tests/test_utils.py", f"import click.utils\nimport pytest\n\n\n{KEPT}")

    assert tamper(repo, files, change) == []


# A twin pytest never runs excuses nothing: shadowed in its own module, left out by
# `__test__`, in a folder pytest does not collect, or under a configuration the change edits.
TWIN = "tests/prompts/test_confirm.py"
PYPROJECT = '[project]\nname = "click"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'


@pytest.mark.parametrize(
    ("twin", "why"),
    [
        (CONFIRM + "\n\ntest_confirm_repeat = None\n", "rebound"),
        (CONFIRM + "\n\ndef test_confirm_repeat():\n    pass\n", "defined again"),
        (CONFIRM + "\n\ndel test_confirm_repeat\n", "deleted"),
        (CONFIRM + "\n\nfrom other import test_confirm_repeat\n", "imported over"),
        ("__test__ = False\n" + CONFIRM, "a module left out"),
        (CONFIRM + "\n\ntest_confirm_repeat.__test__ = False\n", "the function left out"),
        (CONFIRM + "\n\nsetattr(test_confirm_repeat, '__test__', False)\n", "left out by setattr"),
        (CONFIRM + "\n\ntest_confirm_repeat = pytest.mark.skip(test_confirm_repeat)\n", "skipped"),
        ("import pytest\n" + CONFIRM + "\n\npytest.mark.skip(test_confirm_repeat)\n", "marked"),
        (CONFIRM + "\n\nglobals()['test_confirm_repeat'] = None\n", "rebound by name"),
    ],
)
def test_a_twin_its_own_module_does_not_run_excuses_nothing(repo: GitRepo, twin: str, why: str):
    assert tamper(repo, {**FILES, TWIN: twin}, drop) == REMOVED, why


@pytest.mark.parametrize(
    "folder",
    [
        "build/lib/tests",
        "dist/tests",
        "node_modules/pkg/tests",
        "venv/lib/tests",
        ".tox/py311/tests",
        "tests/.cache",
        "pkg.egg/tests",
        "_darcs/tests",
        "CVS/tests",
        "{arch}/tests",
    ],
)
def test_a_twin_in_a_folder_pytest_skips_by_default_excuses_nothing(repo: GitRepo, folder: str):
    files = {"tests/test_utils.py": UTILS, f"{folder}/test_confirm.py": CONFIRM}
    assert tamper(repo, files, drop) == REMOVED, folder


@pytest.mark.parametrize(
    ("name", "text", "twin"),
    [
        ("pyproject.toml", PYPROJECT, "examples/tests/test_confirm.py"),
        ("pytest.ini", "[pytest]\ntestpaths = tests docs\n", "examples/test_confirm.py"),
        ("tox.ini", "[tox]\n\n[pytest]\ntestpaths =\n    tests\n", "src/test_confirm.py"),
        ("setup.cfg", "[tool:pytest]\ntestpaths = tests\n", "other/test_confirm.py"),
        ("pytest.ini", "[pytest]\nnorecursedirs = prompts\n", TWIN),
        ("setup.cfg", "[tool:pytest]\nnorecursedirs = tests/prompt*\n", TWIN),
        ("pyproject.toml", '[tool.pytest.ini_options]\nnorecursedirs = ["p*"]\n', TWIN),
        ("pytest.ini", "[pytest]\npython_files = test_utils.py\n", TWIN),
        ("pytest.ini", "[pytest]\naddopts = --ignore=tests/prompts\n", TWIN),
        ("pyproject.toml", "[tool.pytest]\ntestpaths = ['src']\n", TWIN),
        ("pytest.ini", "[pytest\ntestpaths = tests\n", TWIN),
        ("pyproject.toml", "[tool.pytest.ini_options\n", TWIN),
        ("tox.ini", "[pytest]\naddopts = -k 'not x\n", TWIN),
        ("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = 1\n", TWIN),
    ],
)
def test_a_twin_the_base_configuration_does_not_collect_excuses_nothing(
    repo: GitRepo, name: str, text: str, twin: str
):
    files = {"tests/test_utils.py": UTILS, twin: CONFIRM, name: text}
    assert tamper(repo, files, drop) == REMOVED, (name, text, twin)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", PYPROJECT),
        ("pyproject.toml", '[project]\nname = "click"\n'),
        ("pytest.ini", "[pytest]\ntestpaths = ./tests/ docs\nnorecursedirs = build .* data\n"),
        ("setup.cfg", "[tool:pytest]\ntestpaths = t*\npython_files = test_*.py\n"),
        ("tox.ini", "[tox]\nenvlist = py311\n\n[pytest]\naddopts = -m 'not stress'\n"),
    ],
)
def test_a_twin_the_base_configuration_collects_runs_on(repo: GitRepo, name: str, text: str):
    assert tamper(repo, {**FILES, name: text}, drop) == []


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        (
            "tests/conftest.py",
            "import pytest\n",
            "def pytest_collection_modifyitems(items):\n"
            "    items[:] = [i for i in items if 'prompts' not in str(i.path)]\n",
        ),
        ("conftest.py", "", "collect_ignore = ['tests/prompts']\n"),
        ("tests/prompts/conftest.py", None, "collect_ignore = ['test_confirm.py']\n"),
        ("pytest.ini", "[pytest]\n", "[pytest]\npython_files = test_utils.py\n"),
        ("tox.ini", "[pytest]\n", "[pytest]\naddopts = --deselect tests/prompts\n"),
        ("setup.cfg", "[metadata]\n", "[tool:pytest]\nnorecursedirs = prompts\n"),
        ("pyproject.toml", PYPROJECT, PYPROJECT + 'addopts = "--ignore=tests/prompts"\n'),
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace("click", "click2")),
        ("docs/conftest.py", "", "import pytest\n"),
    ],
)
def test_a_change_to_a_conftest_or_the_configuration_trusts_no_twin(
    repo: GitRepo, name: str, before: str | None, after: str
):
    def change(r: GitRepo) -> None:
        drop(r)
        r.write(name, after)

    files = {**FILES, **({name: before} if before is not None else {})}
    # The removal is reported, whatever else the rest of the rule says of the edit.
    assert REMOVED[0] in tamper(repo, files, change), name


def test_a_conftest_removed_by_the_change_trusts_no_twin(repo: GitRepo):
    def change(r: GitRepo) -> None:
        drop(r)
        r.remove("tests/conftest.py")

    found = tamper(repo, {**FILES, "tests/conftest.py": "import pytest\n"}, change)
    assert REMOVED[0] in found
