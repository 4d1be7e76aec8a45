"""`test-tamper` and platform flags: a skip whose condition is the project's own name for a
platform (click's `skipif(WIN)`, `WIN = sys.platform.startswith("win")` in `click/_compat.py`)
cannot skip on Linux, and passes like the condition written in place; a flag that may hold on
Linux, or a name something else may rebind, is still reported. Real rule, real git."""

from __future__ import annotations

import pytest

from tests.guards.conftest import GitRepo, tamper

COMPAT = 'import sys\n\nWIN = sys.platform.startswith("win")\n'
TESTS = """\
import pytest

from pkg._compat import WIN


def test_edit():
    assert edit("a") == "a"
"""
SKIPPED = TESTS.replace("def test_edit", '@pytest.mark.skipif(WIN, reason="no sed")\ndef test_edit')
FILES = {"src/pkg/__init__.py": "", "src/pkg/_compat.py": COMPAT, "tests/test_edit.py": TESTS}
ADDED = ["tests/test_edit.py:6 skip marker added to a test"]


def skip(r: GitRepo) -> None:
    r.write("tests/test_edit.py", SKIPPED)


def test_a_skip_on_an_imported_platform_flag_still_runs(repo: GitRepo):
    assert tamper(repo, FILES, skip) == []


@pytest.mark.parametrize(
    ("definition", "reported"),
    [
        ('WIN = sys.platform == "darwin"', False),
        ('WIN: bool = os.name == "nt"', False),
        ('WIN = sys.platform.startswith("linux")', True),
        ('WIN = sys.platform != "win32"', True),
        ('WIN = importlib.util.find_spec("sed") is None', True),
        ('WIN = bool(os.environ.get("CI"))', True),
        ("WIN = OTHER", True),
    ],
)
def test_what_the_flag_stands_for_decides(repo: GitRepo, definition: str, reported: bool):
    compat = f"import os\nimport sys\n\nOTHER = sys.platform == 'win32'\n{definition}\n"
    found = tamper(repo, {**FILES, "src/pkg/_compat.py": compat}, skip)
    assert found == (ADDED if reported else [])


def test_skipping_unless_the_flag_holds_is_tampering(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("tests/test_edit.py", SKIPPED.replace("skipif(WIN", "skipif(not WIN"))

    assert tamper(repo, FILES, change) == ADDED


def test_a_flag_the_test_module_defines_still_runs(repo: GitRepo):
    own = TESTS.replace(
        "from pkg._compat import WIN", 'import sys\n\nWIN = sys.platform == "win32"'
    )

    def change(r: GitRepo) -> None:
        r.write(
            "tests/test_edit.py",
            own.replace("def test_edit", "@pytest.mark.skipif(WIN)\ndef test_edit"),
        )

    assert tamper(repo, {"tests/test_edit.py": own}, change) == []


def test_a_flag_imported_relatively_still_runs(repo: GitRepo):
    relative = TESTS.replace("from pkg._compat", "from ._compat")
    files = {"tests/__init__.py": "", "tests/_compat.py": COMPAT, "tests/test_edit.py": relative}

    def change(r: GitRepo) -> None:
        r.write("tests/test_edit.py", SKIPPED.replace("from pkg._compat", "from ._compat"))

    assert tamper(repo, files, change) == []


def test_a_skip_in_the_body_under_the_flag_still_runs(repo: GitRepo):
    def change(r: GitRepo) -> None:
        body = "def test_edit():\n    if WIN:\n        pytest.skip('no sed')\n"
        r.write("tests/test_edit.py", TESTS.replace("def test_edit():\n", body))

    assert tamper(repo, FILES, change) == []


def test_rewording_a_platform_skip_into_the_flag_passes(repo: GitRepo):
    # click's `skipif(platform.system() == "Windows")` becoming `skipif(WIN)`.
    spelled = SKIPPED.replace("skipif(WIN", 'skipif(platform.system() == "Windows"')
    files = {**FILES, "tests/test_edit.py": spelled}
    assert tamper(repo, files, skip) == []


def test_a_flag_added_with_its_skip_still_runs(repo: GitRepo):
    # click's `MAC` added to `_compat.py` with the skip on free-threaded 3.14 on macOS.
    condition = "MAC and sys.version_info >= (3, 13) and sys._is_gil_enabled()"

    def change(r: GitRepo) -> None:
        r.write("src/pkg/_compat.py", COMPAT + 'MAC = sys.platform == "darwin"\n')
        header = f"@pytest.mark.skipif(\n    {condition},\n    reason='flaky',\n)\ndef test_edit"
        r.write(
            "tests/test_edit.py",
            TESTS.replace("import WIN", "import MAC\nimport sys").replace("def test_edit", header),
        )

    assert tamper(repo, FILES, change) == []


def test_a_fixture_patching_the_flag_at_run_time_changes_nothing(repo: GitRepo):
    fixture = (
        "import pytest\n\nimport pkg._compat\n\n\n@pytest.fixture\ndef windows(monkeypatch):\n"
        '    monkeypatch.setattr(pkg._compat, "WIN", True)\n'
    )
    assert tamper(repo, {**FILES, "tests/conftest.py": fixture}, skip) == []


# -- what can make the name stand for something else -------------------------------------------


@pytest.mark.parametrize(
    "conftest",
    [
        "import pkg._compat\n\npkg._compat.WIN = True\n",
        "import pkg._compat\n\npkg._compat.WIN |= True\n",
        'from pkg import _compat\n\nsetattr(_compat, "WIN", True)\n',
        'import pkg._compat\n\nvars(pkg._compat)["WIN"] = True\n',
        "import pytest\n\nimport pkg._compat\n\n"
        'pytest.MonkeyPatch().setattr(pkg._compat, "WIN", 1)\n',
    ],
)
def test_a_flag_rebound_before_collection_is_tampering(repo: GitRepo, conftest: str):
    def change(r: GitRepo) -> None:
        r.write("tests/conftest.py", conftest)
        skip(r)

    assert tamper(repo, FILES, change) == ADDED


@pytest.mark.parametrize(
    "edit",
    [
        "WIN = True",
        "WIN |= True",
        "def WIN():\n    return True",
        "for WIN in (True,):\n    pass",
        "from pkg._compat import *",
    ],
)
def test_a_test_module_that_binds_the_name_again_is_tampering(repo: GitRepo, edit: str):
    def change(r: GitRepo) -> None:
        r.write("tests/test_edit.py", SKIPPED.replace("import WIN\n", f"import WIN\n\n{edit}\n"))

    found = tamper(repo, FILES, change)
    assert [line.split(" ", 1)[1] for line in found] == ["skip marker added to a test"]


@pytest.mark.parametrize(
    "compat",
    [
        COMPAT + "if True:\n    WIN = True\n",
        COMPAT + "WIN = not WIN\n",
        "from pkg._platform import WIN\n",
        "import sys\n\nif sys.platform:\n    WIN = sys.platform.startswith('win')\n",
    ],
)
def test_a_flag_defined_more_than_once_or_elsewhere_is_tampering(repo: GitRepo, compat: str):
    files = {**FILES, "src/pkg/_compat.py": compat, "src/pkg/_platform.py": COMPAT}
    assert tamper(repo, files, skip) == ADDED


def test_a_module_found_twice_is_tampering(repo: GitRepo):
    files = {**FILES, "vendor/pkg/_compat.py": "WIN = True\n"}
    assert tamper(repo, files, skip) == ADDED


def test_the_flag_is_read_at_the_head(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("src/pkg/_compat.py", "WIN = True\n")
        skip(r)

    assert tamper(repo, FILES, change) == ADDED


# -- red-team: a flag that is not what it looks like ---------------------------------------

RT_TESTS = "import pytest\n{imp}\n\n\ndef test_edit():\n    assert edit('a') == 'a'\n"


def _skip_on(repo: GitRepo, flag: str, imp: str, extra: dict[str, str]) -> list[str]:
    files = {"src/pkg/__init__.py": "", "tests/test_edit.py": RT_TESTS.format(imp=imp), **extra}
    skipped = RT_TESTS.format(imp=imp).replace(
        "def test_edit", f'@pytest.mark.skipif({flag}, reason="win")\ndef test_edit'
    )
    return tamper(repo, files, lambda r: r.write("tests/test_edit.py", skipped))


@pytest.mark.parametrize(
    ("flag", "imp", "extra"),
    [
        # Rebound through the module's own __setattr__, in a conftest.
        (
            "WIN",
            "from pkg._compat import WIN",
            {
                "src/pkg/_compat.py": COMPAT,
                "tests/conftest.py": 'import pkg._compat as c\n\nc.__setattr__("WIN", True)\n',
            },
        ),
        # Rebound by exec in the test module.
        ("WIN", 'from pkg._compat import WIN\nexec("WIN = True")', {"src/pkg/_compat.py": COMPAT}),
        # A package flag named like a submodule, which importing the submodule rebinds.
        (
            "windows",
            "from pkg import windows",
            {
                "src/pkg/__init__.py": (
                    'import sys\n\nwindows = sys.platform.startswith("win")\n\n'
                    "from pkg import core  # noqa\n"
                ),
                "src/pkg/core.py": "from pkg.windows import console  # noqa\n",
                "src/pkg/windows.py": "console = None\n",
            },
        ),
        # The flag's module reads a `sys` of its own making.
        (
            "WIN",
            "from pkg._compat import WIN",
            {
                "src/pkg/_compat.py": (
                    'from pkg._platforms import sys\n\nWIN = sys.platform.startswith("win")\n'
                ),
                "src/pkg/_platforms.py": (
                    'import sys as _sys\n\n\nclass sys:\n    platform = "win-" + _sys.platform\n'
                ),
            },
        ),
    ],
)
def test_a_flag_that_may_hold_on_linux_after_all_is_reported(
    repo: GitRepo, flag: str, imp: str, extra: dict[str, str]
):
    found = _skip_on(repo, flag, imp, extra)
    assert [f for f in found if f.endswith(" skip marker added to a test")], found
