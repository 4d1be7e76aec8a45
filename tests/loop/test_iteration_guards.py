"""Guards that stop destruction, not work, in a real cycle: a refactor that replaces what it
removes lands in one iteration, and a version bump in a project file that also configures the
test runner is no change to the test surface, while a new `addopts` is."""

from __future__ import annotations

import pytest

from reviewers.fake_servers import edits_reply, file_block, replace_block
from tests.guards.destruction_cases import BILLING, BILLING_REFACTORED, BILLING_RULES
from tests.loop.conftest import IMPLEMENTER, Loop

pytestmark = pytest.mark.slow

PYPROJECT = """\
[project]
name = "calc"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"
"""


def test_a_180_line_refactor_lands_in_one_iteration(loop: Loop):
    loop.project(files={"billing.py": BILLING})
    loop.models.script(
        IMPLEMENTER,
        edits_reply(
            file_block("billing.py", BILLING_REFACTORED),
            file_block("billing_rules.py", BILLING_RULES),
        ),
    )
    result = loop.run("Refactor billing.py: move the rules out, rename compute_total.")
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert len(result.iterations) == 1 and result.refusals == []
    assert loop.branch_file("billing.py") == BILLING_REFACTORED.rstrip("\n")
    numstat = loop.repo.git("diff", "--numstat", "HEAD", "ourobot/T-1", "--", "billing.py")
    assert numstat.split()[:2] == ["132", "180"]


def test_a_version_bump_lands_where_a_new_addopts_is_refused_as_test_surface(loop: Loop):
    loop.project(files={"pyproject.toml": PYPROJECT})
    bump = replace_block("pyproject.toml", ('version = "1.0"\n', 'version = "1.1"\n'))
    loop.models.script(IMPLEMENTER, edits_reply(bump))
    result = loop.run("Release 1.1: bump the version.")
    assert result.outcome == "ready", (result.reason, loop.progress)
    assert 'version = "1.1"' in loop.branch_file("pyproject.toml")

    plugin_off = replace_block("pyproject.toml", ('addopts = "-q"\n', 'addopts = "-q -p no:x"\n'))
    loop.models.script(IMPLEMENTER, *[edits_reply(plugin_off)] * 3)
    refused = loop.run("Quieter test runs.", ticket_id="T-2")
    assert refused.outcome == "blocked"
    assert {(r.rule, r.path) for _, r in refused.refusals} == {("test-tamper", "pyproject.toml")}
    assert (
        "pyproject.toml: [tool.pytest.ini_options] changed, where the test runner's "
        "configuration is read: changing how the suite runs needs the ticket label"
    ) in loop.prompts()[-1]
