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
