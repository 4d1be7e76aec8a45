"""The demo's world, written down: the repository it creates, the two tickets a maintainer
files, and every answer the scripted models give. Nothing here runs anything.

Ticket 1 is an ordinary change (add `multiply`). The first review round rejects it with one
specific finding (no test for the new function); the fix round adds the test and is approved.
Ticket 2 asks to tidy the install guide; the scripted implementer answers, every time it is
asked, with a rewrite that cuts the 250-line guide to 30 lines: the iteration guard
(`max_deletions_per_iteration`) refuses it each time and the ticket ends blocked. Where the
setup phase can run, the project's tests need a third-party package that its `setup.command`
installs (`demo_setup`).
"""

from __future__ import annotations

import json

from app.cli import demo_setup
from reviewers.fake_servers import Reply, Text, append_block, edits_reply, file_block
from reviewers.obligations import finding_id
from reviewers.verdict import parse_finding

OWNER, REPO = "maintainer", "calculator"
INSTALL_LINES = 250
REVIEWERS = ("demo-claude", "demo-gpt")
IMPLEMENTER = "demo-claude-implementer"

_INSTALL = ["# Installing calculator", ""] + [
    f"{n}. A careful installation step, written once and kept." for n in range(1, INSTALL_LINES - 1)
]
INSTALL_GUIDE = "\n".join(_INSTALL) + "\n"
assert INSTALL_GUIDE.count("\n") == INSTALL_LINES

MULTIPLY = "\n\ndef multiply(a: float, b: float) -> float:\n    return a * b\n"
MULTIPLY_TEST = (
    "\n\ndef test_multiply() -> None:\n    from calculator.ops import multiply\n\n"
    "    assert multiply(4, 2.5) == 10\n"
)
# The rewrite ticket 2's implementer proposes: 30 lines left of 250.
DESTRUCTIVE_INSTALL = "".join(INSTALL_GUIDE.splitlines(keepends=True)[:30])

FILES = {
    "README.md": "# calculator\n\nA tiny calculator used by the ourobot demo.\n",
    "calculator/__init__.py": "",
    "calculator/ops.py": (
        "def add(a: float, b: float) -> float:\n    return a + b\n\n\n"
        "def subtract(a: float, b: float) -> float:\n    return a - b\n"
    ),
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "from calculator.ops import add, subtract\n\n\n"
        "def test_add() -> None:\n    assert add(2, 3) == 5\n\n\n"
        "def test_subtract() -> None:\n    assert subtract(5, 3) == 2\n"
    ),
    "INSTALL.md": INSTALL_GUIDE,
    ".github/ourobot.yml": (
        "version: 1\n"
        "project:\n  name: calculator\n  description: A tiny calculator.\n"
        f'review:\n  models: ["anthropic:{REVIEWERS[0]}", "openai:{REVIEWERS[1]}"]\n'
        "  quorum: 2\n  rounds: 2\n"
        "budgets:\n  implementer_iterations: 4\n"
        f'models:\n  implementer: "anthropic:{IMPLEMENTER}"\n'
        'test_command: "python -m pytest -q"\n'
        'merge:\n  required_checks: ["ci/test"]\n'
    ),
}


# The scripted models cost nothing: priced 0, so the spend caps count them at $0 and
# `ourobot status` lists them as at no cost, not at the dearest price of a model nobody priced.
SCRIPTED_PRICES = {
    model: {"input": 0, "output": 0}
    for model in (f"anthropic:{REVIEWERS[0]}", f"openai:{REVIEWERS[1]}", f"anthropic:{IMPLEMENTER}")
}


def model_entry(model_id: str, base_url: str | None = None) -> str:
    """A real model as the config names it (YAML): the id, or the `{id:, base_url:}` form."""
    if base_url is None:
        return json.dumps(model_id)
    return f"{{id: {json.dumps(model_id)}, base_url: {json.dumps(base_url)}}}"


FLOAT_TEST = (
    "\n\ndef test_add_floats() -> None:\n    from calc_testkit import close\n\n"
    "    assert close(add(0.1, 0.2), 0.3)\n"
)


def files(model: str | None = None, index_url: str | None = None) -> dict[str, str]:
    """The repository's files; with a real `model` (a `model_entry`) it implements and
    reviews alone; with `index_url` its tests need `calc-testkit`, which its setup.command
    installs from that index (`demo_setup`)."""
    config = FILES[".github/ourobot.yml"]
    tests = FILES["tests/test_ops.py"]
    if model is not None:
        config = config.replace(
            f'review:\n  models: ["anthropic:{REVIEWERS[0]}", "openai:{REVIEWERS[1]}"]\n'
            "  quorum: 2\n",
            f"review:\n  models: [{model}]\n  quorum: 1\n",
        ).replace(f'implementer: "anthropic:{IMPLEMENTER}"', f"implementer: {model}")
    if index_url is not None:
        host = index_url.split("/")[2]
        setup = (
            f"setup:\n  command: {json.dumps(demo_setup.install_command('python', index_url))}\n"
            f"  network: [{json.dumps(host)}]\n"
        )
        config = config.replace(
            'test_command: "python -m pytest -q"\n',
            f'test_command: "PYTHONPATH={demo_setup.TARGET} python -m pytest -q"\n{setup}',
        )
        tests += FLOAT_TEST
    return {**FILES, ".github/ourobot.yml": config, "tests/test_ops.py": tests}


CI_COMMAND = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]

TICKETS = (
    ("Add multiply", "calculator has add and subtract; it needs `multiply(a, b)` too."),
    (
        "Tidy up INSTALL.md",
        "The install guide is long. Make it shorter and easier to read.",
    ),
)

FINDING = (
    "FINDING major calculator/ops.py:9 multiply() is new but no test exercises it; "
    "tests/test_ops.py covers add and subtract only"
)
REJECT = Text(f"{FINDING}\nVERDICT: REJECT")
APPROVE = Text("The change does what the ticket asks and is tested.\nVERDICT: APPROVE")


def finding_resolved() -> Text:
    """The fix round's approval: it answers the open obligation (the finding) as resolved,
    as every reviewer of a round after a rejection must (`reviewers.obligations`)."""
    finding = parse_finding(FINDING)
    assert not isinstance(finding, str), finding
    return Text(
        f"RESOLVED {finding_id(finding)} tests/test_ops.py now tests multiply\n{APPROVE.text}"
    )


def reviewer_script() -> dict[str, tuple[Reply, ...]]:
    """Each reviewer's answers in order (then APPROVE): the first round of ticket 1 is
    rejected by one reviewer with the finding; the fix round is approved by both, the finding
    answered as resolved."""
    resolved = finding_resolved()
    return {REVIEWERS[0]: (REJECT, resolved), REVIEWERS[1]: (APPROVE, resolved)}


# The implementer's answers, for the loop: ticket 1's change and its fix round, each followed by
# DONE once the harness says the submission is green, and ticket 2's rewrite, which it
# proposes again every time it is asked.
TICKET_1_CHANGE = edits_reply(append_block("calculator/ops.py", MULTIPLY), prose="Adding multiply.")
TICKET_1_FIX = edits_reply(
    append_block("tests/test_ops.py", MULTIPLY_TEST), prose="Adding the missing test."
)
DONE = Text("The ticket's acceptance criteria are met.\n\nDONE")
TICKET_2_REWRITE = edits_reply(
    file_block("INSTALL.md", DESTRUCTIVE_INSTALL), prose="A much shorter install guide."
)
