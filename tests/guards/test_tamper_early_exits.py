"""Test code that ends the run before its tests, with success (`app.guards.tamper.early_exits`): an
exit at a test module's top level or anywhere in a conftest.py, a JavaScript test file's
`process.exit`, a Go `TestMain` that never runs the tests. Real rule, real git; the bare diff
reads the added lines."""

from __future__ import annotations

import subprocess

import pytest

from app.guards.tamper.early_exits import MESSAGE
from tests.guards.conftest import GitRepo, by_rule, diff_result, tamper

PY = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
CONFTEST = "import pytest\n"
GO = (
    'package calc\n\nimport (\n\t"os"\n\t"testing"\n)\n\n'
    'func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("bad")\n\t}\n}\n'
)
JS = "const test = require('node:test');\n\ntest('adds', () => {\n  check(add(1, 2));\n});\n"
FILES = {"tests/test_calc.py": PY, "tests/conftest.py": CONFTEST, "calc_test.go": GO}


def _append(path: str, text: str):
    def change(repo: GitRepo) -> None:
        repo.write(path, (repo.path / path).read_text() + text)

    return change


@pytest.mark.parametrize(
    ("path", "text", "line"),
    [
        ("tests/conftest.py", "import os\nos._exit(0)\n", 3),
        ("tests/conftest.py", 'pytest.exit("done", returncode=0)\n', 2),
        ("tests/conftest.py", "def pytest_configure(config):\n    pytest.exit('ok', 0)\n", 3),
        (
            "tests/conftest.py",
            "@pytest.fixture(autouse=True)\ndef bye():\n    raise SystemExit\n",
            4,
        ),
        ("tests/test_calc.py", "import sys\nsys.exit(0)\n", 7),
        ("tests/test_calc.py", "raise SystemExit(0)\n", 6),
        ("tests/test_calc.py", "exit()\n", 6),
        ("tests/test_calc.py", "import os as o\nif True:\n    o._exit(0)\n", 8),
        ("tests/test_calc.py", "from os import _exit\n_exit(0)\n", 7),
        ("tests/test_calc.py", "try:\n    import x\nexcept ImportError:\n    sys.exit(0)\n", 9),
    ],
)
def test_a_python_exit_where_pytest_collects_or_sets_up_is_reported(
    repo: GitRepo, path: str, text: str, line: int
):
    assert tamper(repo, FILES, _append(path, text)) == [f"{path}:{line} {MESSAGE}"]


@pytest.mark.parametrize(
    "text",
    [
        # Never runs under pytest.
        'if __name__ == "__main__":\n    sys.exit(pytest.main())\n',
        # A CLI test's command exits; the test goes on.
        "def test_cli_exits():\n    def cli():\n        sys.exit(1)\n\n    assert run(cli) == 1\n",
        "# sys.exit(0) would end the run\n",
    ],
)
def test_an_exit_that_ends_no_run_passes(repo: GitRepo, text: str):
    assert tamper(repo, FILES, _append("tests/test_calc.py", "\n\n" + text)) == []


@pytest.mark.parametrize(
    ("text", "message_line", "message"),
    [
        ("\nfunc TestMain(m *testing.M) {}\n", 14, "TestMain never calls m.Run()"),
        ("\nfunc TestMain(m *testing.M) { os.Exit(0) }\n", 14, "TestMain never calls m.Run()"),
        (
            "\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n\tos.Exit(m.Run())\n}\n",
            15,
            MESSAGE,
        ),
        ("\nfunc init() {\n\tos.Exit(0)\n}\n", 15, MESSAGE),
    ],
)
def test_a_go_package_whose_tests_never_run_is_reported(
    repo: GitRepo, text: str, message_line: int, message: str
):
    found = tamper(repo, FILES, _append("calc_test.go", text))
    assert len(found) == 1 and found[0].startswith(f"calc_test.go:{message_line} {message}")


@pytest.mark.parametrize(
    "text",
    [
        "\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n",
        "\nfunc TestMain(m *testing.M) {\n\tif err := setup(); err != nil {\n\t\tos.Exit(1)\n"
        "\t}\n\tcode := m.Run()\n\tteardown()\n\tos.Exit(code)\n}\n",
        # Go's helper-process idiom: the test binary run as a child, which exits.
        '\nfunc TestHelperProcess(t *testing.T) {\n\tif os.Getenv("HELPER") != "1" {\n'
        "\t\treturn\n\t}\n\tos.Exit(0)\n}\n",
    ],
)
def test_a_test_main_that_runs_the_tests_passes(repo: GitRepo, text: str):
    assert tamper(repo, FILES, _append("calc_test.go", text)) == []


def test_an_unchanged_test_main_is_not_judged_again(repo: GitRepo):
    odd = GO + "\nfunc TestMain(m *testing.M) {}\n"
    assert tamper(repo, {"calc_test.go": odd}, _append("calc_test.go", "\n// note\n")) == []


def test_a_javascript_test_file_that_exits_at_load_is_reported(repo: GitRepo):
    def change(r: GitRepo) -> None:
        r.write("test/calc.js", JS.replace("\n\n", "\nprocess.exit(0);\n\n", 1))

    assert tamper(repo, {"test/calc.js": JS}, change) == [f"test/calc.js:2 {MESSAGE}"]


def test_a_javascript_fixture_script_may_exit(repo: GitRepo):
    change = _append("test/fixtures/child.js", "process.exit(0);\n")
    assert tamper(repo, {"test/fixtures/child.js": "run();\n"}, change) == []


def test_a_bare_diff_reads_the_added_lines(repo: GitRepo):
    for path, text in FILES.items():
        repo.write(path, text)
    repo.commit("base")
    _append("tests/conftest.py", "import os\nos._exit(0)\n")(repo)
    _append("calc_test.go", "\nfunc TestMain(m *testing.M) {\n\tsetup()\n}\n")(repo)
    diff = subprocess.run(
        ["git", "diff"], cwd=repo.path, env=repo.env, capture_output=True, text=True, check=True
    ).stdout
    found = by_rule(diff_result(diff), "test-tamper")
    assert ("tests/conftest.py", 3, MESSAGE) in found
    assert any(path == "calc_test.go" and "never calls m.Run()" in m for path, _, m in found)


@pytest.mark.parametrize(
    "added",
    [
        "process.on('exit', () => process.exit(0));\n",
        "process.on('exit', () => {\n  process.exitCode = 0;\n});\n",
    ],
)
def test_a_javascript_success_exit_anywhere_in_a_test_file_is_reported(repo: GitRepo, added: str):
    def change(r: GitRepo) -> None:
        r.write("test/calc.js", JS + added)

    found = tamper(repo, {"test/calc.js": JS}, change)
    assert len(found) == 1 and found[0].endswith(MESSAGE)


def test_a_child_told_to_exit_in_a_string_is_no_exit_of_the_run(repo: GitRepo):
    spawn = "test('child exits', () => {\n  run(`node -e 'process.exit(0)'`);\n});\n"
    assert tamper(repo, {"test/calc.js": JS}, lambda r: r.write("test/calc.js", JS + spawn)) == []
