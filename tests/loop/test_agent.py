"""The agent loop with the scripted model servers reading each observation as a model would,
and real bubblewrap: a model that looks, runs and fixes; what its commands cannot reach; the
budgets that stop it; and `ready` only when it says it is done."""

from __future__ import annotations

import re
import socket

import pytest

from reviewers.fake_servers import Reactive, Text, ToolCall, edits_reply, file_block
from tests.loop.conftest import CALC, CALC_TESTS, IMPLEMENTER, PYTEST, Loop

pytestmark = pytest.mark.slow

# The ticket describes the behaviour in words the code does not use, in a repository of many
# files: the file to change is not in the first message, and the model has to look.
TICKET = "Visitors are insulted instead of welcomed: salute them with a Hello, with a test."
GREETING = "def greet(name):\n    return 'Go away, ' + name\n"
# Files that share the ticket's words fill the first message; the one to change shares none.
FILLER = {
    f"pkg/visitors_{n:02d}.py": "".join(
        f"WELCOME_{n}_{k} = 'visitors are welcomed with a salute and a hello'\n" for k in range(60)
    )
    for n in range(30)
}


def bash(command: str) -> Text:
    return Text(f"Let me run this.\n\n```bash\n{command}\n```\n")


EDIT_AND_TEST = (
    "sed -i \"s/'Go away, ' + name/'Hello, ' + name/\" pkg/polite/words.py && "
    "printf 'from pkg.polite.words import greet\\n\\n\\ndef test_greet():\\n"
    '    assert greet("Ann") == "Hello, Ann!"\\n\' > tests/test_words.py && '
    "python -m pytest -q -p no:cacheprovider tests/test_words.py"
)
FIX_AND_TEST = (
    "sed -i \"s/'Hello, ' + name/'Hello, ' + name + '!'/\" pkg/polite/words.py && "
    "python -m pytest -q -p no:cacheprovider"
)


def test_a_model_finds_reads_edits_runs_fails_fixes_and_submits_with_commands(loop: Loop):
    loop.project(command=PYTEST, files={"pkg/polite/words.py": GREETING, **FILLER})
    seen: dict[str, str] = {}

    def after(name: str, reply: Text):
        def respond(last: str) -> Text:
            seen[name] = last
            return reply

        return Reactive(respond)

    loop.models.script(
        IMPLEMENTER,
        bash("grep -rn 'Go away' --include=*.py ."),
        after("grep", bash("sed -n '1,20p' pkg/polite/words.py")),
        after("read", bash(EDIT_AND_TEST)),
        after("red", bash(FIX_AND_TEST)),
        after("green-locally", Text("The tests pass.\n\nSUBMIT")),
        after("submitted", Text("All criteria are met.\n\nDONE")),
    )
    result = loop.run(TICKET)
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert "pkg/polite/words.py:2" in seen["grep"]  # the model saw what grep found
    assert "def greet(name):" in seen["read"]
    assert "1 failed" in seen["red"] and "exited with code 1" in seen["red"]
    assert "1 passed" not in seen["red"] and "passed" in seen["green-locally"]
    assert "Your submission is green" in seen["submitted"]
    assert loop.branch_file("pkg/polite/words.py").endswith("return 'Hello, ' + name + '!'")
    assert "def test_greet" in loop.branch_file("tests/test_words.py")
    assert len(result.iterations) == 1 and len(result.iterations[0].commands) == 4
    assert [c.exit_code for c in result.iterations[0].commands] == [0, 0, 1, 0]
    # The first message did not show the file: the model found it.
    first = loop.models.requests_for(IMPLEMENTER)[0].prompt_text
    assert "Go away" not in first
    # Every artifact of the model's own test runs was left out of the commit.
    tree = loop.repo.git("ls-tree", "-r", "--name-only", "ourobot/T-1")
    assert "__pycache__" not in tree and ".pytest_cache" not in tree


def test_a_command_reaches_no_network_and_reads_no_secret(loop: Loop, bwrap: str):
    env_file = "DATABASE_PASSWORD=hunter2-do-not-leak\n"
    loop.project(files={".env": env_file})
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        probe = (
            f"python3 -c \"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}),"
            " timeout=2); print('REACHED')\nexcept OSError: print('NO NETWORK')\"; "
            'cat .env; echo "[$(wc -c < .env)]"; env | sort'
        )
        loop.models.script(IMPLEMENTER, bash(probe), Text("Nothing to do.\n\nALREADY SATISFIED"))
        result = loop.run(TICKET, env_secrets=["hunter2-do-not-leak"])
    assert result.outcome == "satisfied"
    told = loop.models.requests_for(IMPLEMENTER)[1].body["messages"][-1]["content"]
    assert "NO NETWORK" in told and "REACHED" not in told and "[0]" in told
    assert "hunter2" not in told
    assert "ANTHROPIC" not in told and "OUROBOT" not in told


def test_a_command_that_never_ends_is_killed_at_its_timeout_and_the_loop_goes_on(loop: Loop):
    loop.project(budgets="{implementer_iterations: 3, test_timeout_s: 60, command_timeout_s: 2}")
    fix = file_block("calc.py", "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n"
                     "    return a * b\n")  # fmt: skip
    loop.models.script(IMPLEMENTER, bash("sleep 3599.15"), edits_reply(fix))
    result = loop.run("add() subtracts. Make add(a, b) return a + b.")
    assert result.outcome == "ready", (result.reason, loop.progress)
    told = loop.models.requests_for(IMPLEMENTER)[1].body["messages"][-1]["content"]
    assert "killed after 2s" in told and "the time limit (2s)" in told
    assert result.iterations[0].commands[0].exit_code is None


def test_a_model_that_never_submits_ends_blocked_naming_the_step_budget(loop: Loop):
    loop.project(budgets="{implementer_iterations: 3, test_timeout_s: 60, agent_steps: 4}")
    loop.models.script(IMPLEMENTER, *[bash("ls")] * 4)
    result = loop.run(TICKET)
    assert result.outcome == "blocked" and result.error_class == "steps"
    assert "the step budget (4 model turns, budgets.agent_steps) ran out" in result.reason
    assert len(loop.models.requests_for(IMPLEMENTER)) == 4


def test_a_green_then_more_acting_until_the_budget_is_never_ready(loop: Loop):
    loop.project(budgets="{implementer_iterations: 3, test_timeout_s: 60, agent_steps: 3}")
    fix = edits_reply(file_block("calc.py", "def add(a, b):\n    return a + b\n\n\n"
                                 "def mul(a, b):\n    return a * b\n"))  # fmt: skip
    loop.models.script(IMPLEMENTER, fix, bash("echo more"), bash("echo still more"))
    result = loop.run("add() subtracts. Make add(a, b) return a + b.")
    assert result.outcome == "blocked" and result.error_class == "steps"
    assert "the last green commit" in result.reason and result.branch == "ourobot/T-1"


INSTALL = "".join(f"Install step {n}: run the installer for part {n}.\n" for n in range(1, 251))


def test_a_destructive_rewrite_made_with_a_command_is_refused_like_an_edit_block(loop: Loop):
    loop.project(files={"INSTALL.md": INSTALL})
    rewrite = "printf '# Install\\nRun the installer.\\n' > INSTALL.md"
    loop.models.script(IMPLEMENTER, Text(f"```bash\n{rewrite}\n```\n"), Text("SUBMIT"),
                       *[Text("SUBMIT")] * 2)  # fmt: skip
    result = loop.run("Tidy INSTALL.md.")
    assert result.outcome == "blocked"
    assert {r.rule for _, r in result.refusals} == {"deletions"}
    told = loop.models.requests_for(IMPLEMENTER)[2].body["messages"][-1]["content"]
    assert "reset to the last commit" in told
    assert (loop.repo.path / "INSTALL.md").read_text() == INSTALL


PLANT_WORKFLOW = (
    "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/evil.yml; "
    "echo '[core]' >> .git/config; git status --short"
)


def test_a_command_cannot_write_the_git_directory_or_a_protected_path_past_submission(
    loop: Loop,
):
    loop.project()
    loop.models.script(
        IMPLEMENTER,
        bash(PLANT_WORKFLOW),
        Text("SUBMIT"),
        Text("Done.\n\nALREADY SATISFIED"),
    )
    result = loop.run(TICKET)
    assert {(r.rule, r.path) for _, r in result.refusals} == {
        ("protected-path", ".github/workflows/evil.yml")
    }
    told = loop.models.requests_for(IMPLEMENTER)[1].body["messages"][-1]["content"]
    assert "?? .github/" in told  # read-only git works inside
    assert re.search(r"exited with code \d", told)


def test_declared_test_changes_are_disclosed_not_refused(loop: Loop):
    # mul() is to return a product of three; the test expecting the old value changes on purpose.
    loop.project(command=PYTEST)
    change = (
        "### REPLACE: calc.py\n```\n<<<<<<< SEARCH\ndef mul(a, b):\n    return a * b\n=======\n"
        "def mul(a, b, c=2):\n    return a * b * c\n>>>>>>> REPLACE\n```\n\n"
        "### REPLACE: tests/test_calc.py\n```\n<<<<<<< SEARCH\n"
        "        self.assertEqual(mul(2, 3), 6)\n=======\n"
        "        self.assertEqual(mul(2, 3), 12)\n>>>>>>> REPLACE\n```\n"
    )
    declared = (
        "\n### TEST CHANGES\n- tests/test_calc.py::CalcTest::test_mul: the ticket doubles "
        "every product (criterion 1)\n"
    )
    loop.models.script(IMPLEMENTER, Text(change), Text(change + declared))
    result = loop.run("mul() must double its product: mul(2, 3) == 12.")
    assert result.outcome == "ready", (result.reason, loop.progress)
    first, second = result.iterations
    assert first.refusals and first.commit is None  # undeclared: refused
    assert second.disclosed and "criterion 1" in second.disclosed[0].why
    trailers = loop.repo.git("log", "-1", "--format=%B", "ourobot/T-1")
    assert "Ourobot-Test-Change: tests/test_calc.py::CalcTest::test_mul: the ticket" in trailers


LEGACY_TESTS = """\
import unittest

from calc import legacy_total


class LegacyTest(unittest.TestCase):
    def test_empty(self):
        self.assertEqual(legacy_total([]), 0)

    def test_one(self):
        self.assertEqual(legacy_total([4]), 4)

    def test_many(self):
        self.assertEqual(legacy_total([1, 2, 3]), 6)
"""


def test_a_declared_removal_of_a_removed_features_tests_lands(loop: Loop):
    # 16 lines of tests go with the feature: over the deletion limit (5), but declared.
    loop.project(command=PYTEST, files={
        "calc.py": CALC + "\n\ndef legacy_total(values):\n    return sum(values)\n",
        "tests/test_legacy.py": LEGACY_TESTS,
    })  # fmt: skip
    removal = (
        "### REPLACE: calc.py\n```\n<<<<<<< SEARCH\n\n\ndef legacy_total(values):\n"
        "    return sum(values)\n=======\n>>>>>>> REPLACE\n```\n\n"
        "### DELETE: tests/test_legacy.py\n"
    )
    declared = (
        "\n### TEST CHANGES\n- tests/test_legacy.py: legacy_total() is removed by the ticket, "
        "and its tests with it (criterion 1)\n"
    )
    loop.models.script(IMPLEMENTER, Text(removal), Text(removal + declared), Text("DONE"))
    result = loop.run("Remove legacy_total(): nobody calls it (criterion 1).")
    assert result.outcome == "ready", (result.reason, loop.progress)
    first, second = result.iterations
    assert {r.rule for r in first.refusals} >= {"deletions"} and first.commit is None
    assert not first.disclosed  # a refused submission discloses nothing
    assert second.commit is not None
    said = [d.test for d in second.disclosed]
    assert any(t.startswith("tests/test_legacy.py: changed as declared") for t in said), said
    assert "tests/test_legacy.py" not in loop.repo.git(
        "ls-tree", "-r", "--name-only", "ourobot/T-1"
    )


def test_a_declared_removal_of_a_test_from_a_kept_file_lands(loop: Loop):
    # The guards' static finding ("test 'test_legacy' removed", its code kept) is waived by the
    # declaration before the iteration is judged, so the submission is committed, not reset.
    tests = CALC_TESTS + (
        "\n    def test_legacy(self):\n        from calc import legacy_total\n\n"
        "        self.assertEqual(legacy_total([1, 2]), 3)\n"
    )
    loop.project(command=PYTEST, files={
        "calc.py": CALC + "\n\ndef legacy_total(values):\n    return sum(values)\n",
        "tests/test_calc.py": tests,
    })  # fmt: skip
    removal = (
        "### REPLACE: tests/test_calc.py\n```\n<<<<<<< SEARCH\n\n    def test_legacy(self):\n"
        "        from calc import legacy_total\n\n"
        "        self.assertEqual(legacy_total([1, 2]), 3)\n=======\n>>>>>>> REPLACE\n```\n"
    )
    declared = (
        "\n### TEST CHANGES\n- tests/test_calc.py::CalcTest::test_legacy: it repeats "
        "test_sum, as the ticket says (criterion 1)\n"
    )
    loop.models.script(IMPLEMENTER, Text(removal + declared), Text("DONE"))
    result = loop.run("test_legacy repeats test_sum: remove it (criterion 1).")
    assert result.outcome == "ready", (result.reason, loop.progress)
    [only] = result.iterations
    assert only.commit is not None and not only.refusals
    assert "test_legacy" not in loop.branch_file("tests/test_calc.py")


def test_declaring_a_source_file_never_lifts_the_deletion_limit(loop: Loop):
    helpers = "".join(f"\n\ndef helper_{n}():\n    return {n}\n" for n in range(4))
    loop.project(command=PYTEST, files={"calc.py": CALC + helpers})
    gutted = f"### FILE: calc.py\n```\n{CALC}```\n\n### TEST CHANGES\n- calc.py: rewritten\n"
    loop.models.script(IMPLEMENTER, Text(gutted), Text("DONE"))
    result = loop.run("Tidy calc.py.")
    assert result.outcome == "blocked", result.reason
    assert {r.rule for _, r in result.refusals} == {"deletions"}
    assert "helper_3" in loop.repo.git("show", "HEAD:calc.py")


def test_the_same_actions_arrive_as_tool_calls(loop: Loop):
    loop.project()
    loop.models.script(
        IMPLEMENTER,
        ToolCall("bash", {"command": "sed -i 's/a - b/a + b/' calc.py && grep -n return calc.py"}),
        ToolCall("submit", {}),
        ToolCall("done", {}),
    )
    result = loop.run("add() subtracts. Make add(a, b) return a + b.")
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert "return a + b" in loop.branch_file("calc.py")
