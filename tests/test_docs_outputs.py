"""The command output quoted in the docs is what the commands print: each quoted block runs
(`tests/docs_check.py` says how blocks are marked and what may differ), and a block that
drifts from the program fails here with a diff.

Scenarios, one per group of blocks that run in one shell:
  local-model  docs/getting-started.md and docs/implementer.md: `ourobot cycle` on a small
               repository with a local OpenAI-compatible server (a fake one serving a model
               named as Ollama names it), and the one-line checks before a cycle (no key, a
               dead URL, a URL without /v1)
  path-a       docs/getting-started.md: the App against the local sandbox, from its manifest
               to the checks on a pull request
  sandbox      docs/sandbox.md: `ourobot sandbox`
  demo         README.md: `make demo`, checked in tests/cli/test_demo.py against the run the
               demo tests already make (a second run would cost a minute)
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from reviewers.fake_servers import (
    FakeModelServer,
    Text,
    append_block,
    edits_reply,
    replace_block,
)
from reviewers.providers import NO_KEY
from tests.docs_check import (
    ROOT,
    Block,
    Command,
    DocsDrift,
    Learned,
    Session,
    base_env,
    check_quoted,
    marked_blocks,
    match_output,
    unchecked_outputs,
)
from tests.guards.conftest import GitRepo

# Pages whose every quoted output must be checked (a ```console block with output lines).
CHECKED_PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "getting-started.md",
    ROOT / "docs" / "implementer.md",
    ROOT / "docs" / "sandbox.md",
]
DOC_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Scenario -> where its blocks run; every marked block must belong to one of these.
SCENARIOS = {"local-model", "path-a", "sandbox", "demo"}
LOCAL_MODEL = "qwen2.5-coder:7b"  # as Ollama names it: the colon is part of the name


def blocks_of(scenario: str) -> dict[str, Block]:
    blocks = [b for b in marked_blocks(DOC_PAGES) if b.scenario == scenario]
    names = [b.name for b in blocks]
    assert len(set(names)) == len(names), f"{scenario}: a block name used twice: {names}"
    return {b.name: b for b in blocks}


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def free_port() -> int:
    return closed_port()  # free now; the command that uses it binds it a moment later


def run_all(scenario: str, session: Session, steps: dict[str, Callable[[Block], None]]) -> None:
    """Every block of `scenario`, in the order of `steps`; a block the docs have and the test
    does not run (or the reverse) fails."""
    blocks = blocks_of(scenario)
    assert list(blocks) == list(steps), (
        f"the docs' {scenario} blocks {list(blocks)} are not the ones this test runs "
        f"{list(steps)}, in that order"
    )
    for name, step in steps.items():
        step(blocks[name])


# ---- the marking itself -----------------------------------------------------------------


def test_every_quoted_output_on_the_checked_pages_is_checked():
    unchecked = [where for page in CHECKED_PAGES for where in unchecked_outputs(page)]
    assert unchecked == [], f"quoted output with no docs-check marker: {unchecked}"


def test_every_marked_block_belongs_to_a_scenario_this_suite_runs():
    for block in marked_blocks(DOC_PAGES):
        assert block.scenario in SCENARIOS, f"{block.where}: no scenario {block.scenario!r}"
        assert block.commands, f"{block.where}: no command"


def test_the_yaml_the_getting_started_page_shows_is_a_valid_config():
    from app.repo_config import load_repo_config

    page = (ROOT / "docs" / "getting-started.md").read_text()
    documents = re.findall(r"```yaml\n(.*?)```", page, re.S)
    assert documents
    for document in documents:
        config = load_repo_config(document)
        if "models" in yaml.safe_load(document):
            assert config.models.implementer[0].id == f"openai:{LOCAL_MODEL}"
            assert yaml.safe_load(document)["models"]["implementer"]["base_url"].endswith("/v1")


def test_the_price_warning_the_getting_started_page_quotes_is_the_programs():
    """The one quoted line no scenario prints (a cycle without prices would cost another
    run): the text the program builds for it."""
    from app.controls.pricing import PriceTable
    from app.loop.local_models import unpriced

    page = (ROOT / "docs" / "getting-started.md").read_text()
    [quoted] = re.findall(r"```text\n(ourobot: warning: [^\n]*has no price[^\n]*)\n```", page)
    model = f"openai:{LOCAL_MODEL}"
    price = PriceTable().price(model)
    assert price.source == "unknown"
    said = unpriced(model, price.prices.input, price.prices.output)
    assert quoted == f"ourobot: warning: {said}"


# ---- releases ------------------------------------------------------------------------------


def test_what_the_docs_call_released_is_the_changelogs_latest_release():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## (\d+\.\d+\.\d+)\b", changelog, re.M)
    assert released, "the CHANGELOG names no release"
    latest = released[0]
    assert f"Tag `v{latest}`" in changelog
    for page in ("README.md", "docs/overview.md"):
        said = re.findall(
            r"released version is \**(\d+\.\d+\.\d+)\**\s+\(tag\s+`v([\d.]+)`",
            (ROOT / page).read_text(),
        )
        assert said == [(latest, latest)], f"{page} calls {said} released, the CHANGELOG {latest}"
    # No page installs from or uses a tag no release made (`@v0` was used, and never existed).
    for path in [*DOC_PAGES, *sorted((ROOT / "docs" / "examples").glob("*.yml"))]:
        for ref in re.findall(r"ourobot/ourobot@([\w.-]+)", path.read_text()):
            assert ref in ("main", f"v{latest}"), f"{path.name} uses ourobot/ourobot@{ref}"


def test_the_release_tag_exists_where_tags_were_fetched():
    import subprocess

    latest = re.findall(r"^## (\d+\.\d+\.\d+)\b", (ROOT / "CHANGELOG.md").read_text(), re.M)[0]
    tags = subprocess.run(
        ["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    if not tags:
        pytest.skip("no tags in this checkout (a shallow clone fetches none)")
    assert f"v{latest}" in tags


# ---- what may differ, and what may not ------------------------------------------------


def block(*commands: tuple[str, str]) -> Block:
    return Block(ROOT / "README.md", 1, "unit", "b", tuple(Command(t, e) for t, e in commands))


@pytest.mark.parametrize(
    ("quoted", "printed"),
    [
        ("cycle T on main (f63c05e2c534), 2.3s", "cycle T on main (0a1b2c3d4e5f), 14.0s"),
        ("[ 8] +   6.6s review", "[ 8] +  16.6s review"),
        ("admin token: sbx_5a70...", "admin token: sbx_" + "0123456789abcdef" * 2),
        ('"token":"ghp_f800..."}', '"token":"ghp_7b78ddac1218cace8bca2f145ae82285d310"}'),
        ("first\n...\nlast", "first\nsecond\nthird\nlast"),
        ("first\n...\nlast", "first\nlast"),
        ("ok   sandbox: holds; ...", "ok   sandbox: holds; limits by cgroup v2"),
    ],
)
def test_the_marked_variable_parts_may_differ(quoted: str, printed: str):
    assert match_output(quoted, printed, Learned())


@pytest.mark.parametrize(
    ("quoted", "printed"),
    [
        ("schema version 5", "schema version 6"),  # the kind of drift issue 29 found
        (
            '"title":"Reviewing 51e885c6ceeb"',
            '"title":"Not reviewed: the guards failed on 51e885c6ceeb"',
        ),
        ("cycle T on main (f63c05e2c534)", "cycle T on main (f63c05e2c5)"),  # another length
        ("one line", "one line\nand another"),
        ("", "something printed"),
        ("first\n...\nlast", "first\nlast but one"),
        ("at f63c05e2c534; again f63c05e2c534", "at 0a1b2c3d4e5f; again 111111aaaaaa"),
    ],
)
def test_anything_else_that_differs_is_drift(quoted: str, printed: str):
    assert not match_output(quoted, printed, Learned())
    with pytest.raises(DocsDrift, match="is not what it prints"):
        check_quoted(block(("ourobot x", quoted)), [printed], {})


def test_a_value_shown_once_is_learned_and_used_by_later_commands(tmp_path: Path):
    with Session(tmp_path, base_env(tmp_path / "home"), {}) as session:
        session.run(block(("echo code=0123456789abcdef0123", "code=55511564fb23874e40be")))
        assert session.learned.values["55511564fb23874e40be"] == "0123456789abcdef0123"
        session.run(block(("echo $((1+1)) 55511564fb23874e40be", "2 55511564fb23874e40be")))
        with pytest.raises(DocsDrift):  # the same code must be shown again, not another one
            session.run(block(("echo 0000000000aaaaaaaaaa", "55511564fb23874e40be")))


def test_aliases_give_commands_the_real_values_and_outputs_the_docs_ones(tmp_path: Path):
    real = tmp_path / "trial"
    aliases = {"/tmp/ourobot-trial": str(real), "8765": "45678"}
    with Session(tmp_path, base_env(tmp_path / "home"), aliases) as session:
        session.run(block(
            ("mkdir -p /tmp/ourobot-trial && cd /tmp/ourobot-trial && pwd", "/tmp/ourobot-trial"),
            ("echo http://127.0.0.1:8765/ 8765", "http://127.0.0.1:8765/ 8765"),
        ))  # fmt: skip
        status, printed = session.execute("echo 45678 18765")
    assert real.is_dir() and (status, printed) == (0, "8765 18765\n")


# ---- the scenarios -----------------------------------------------------------------------

CALC = "def add(a, b):\n    return a - b\n"
CALC_TEST = "from calc import add\n\n\ndef test_add_zero():\n    assert add(2, 0) == 2\n"
TICKET = (
    "# add() subtracts\n\nadd(2, 3) returns -1. Make add() return the sum, and add a test for it.\n"
)


@pytest.fixture
def project(tmp_path: Path) -> GitRepo:
    """The repository the getting-started page works a ticket on: calc.py, a passing test."""
    repo = GitRepo(tmp_path / "myproject", tmp_path / "git-home")
    repo.write("calc.py", CALC)
    repo.write("test_calc.py", CALC_TEST)
    repo.commit("calc")
    (repo.path / "TICKET.md").write_text(TICKET)  # untracked, as a user's would be
    (repo.path / "TICKET-3.md").write_text(TICKET)  # docs/implementer.md's
    return repo


@pytest.mark.slow
def test_getting_started_a_local_model(tmp_path: Path, project: GitRepo, bwrap: str):
    with FakeModelServer("openai", api_key=NO_KEY) as server:
        server.script(
            LOCAL_MODEL,
            Text('Let me look at add().\n\n```bash\ngrep -n "def add" -A1 calc.py\n```\n'),
            edits_reply(
                replace_block("calc.py", ("    return a - b\n", "    return a + b\n")),
                append_block("test_calc.py", "\n\ndef test_add():\n    assert add(2, 3) == 5\n"),
            ),
            Text("DONE"),
            # docs/implementer.md: the same ticket as TICKET-3, with a test run first.
            Text('```bash\ngrep -rn "def add" .\n```\n'),
            Text("```bash\npython -m pytest -q\n```\n"),
            edits_reply(
                replace_block("calc.py", ("    return a - b\n", "    return a + b\n")),
                append_block("test_calc.py", "\n\ndef test_add():\n    assert add(2, 3) == 5\n"),
            ),
            Text("DONE"),
        )
        aliases = {"~/src/myproject": str(project.path), "11434": str(server.port)}
        env = base_env(tmp_path / "home", OUROBOT_DATA_DIR=str(tmp_path / "data"))
        with Session(tmp_path, env, aliases) as session:

            def dead(block: Block) -> None:
                session.aliases["11434"] = str(closed_port())
                session.run(block)

            def live(block: Block) -> None:
                session.aliases["11434"] = str(server.port)
                session.run(block)

            run_all("local-model", session, {
                "version": session.run,
                "ticket": session.run,
                "ready": session.run,
                "no-key": session.run,
                "dead-url": dead,
                "no-v1": live,
                "json": live,
            })  # fmt: skip
            # The check fails when a quoted output drifts: the same block, one word changed.
            no_key = blocks_of("local-model")["no-key"]
            command = no_key.commands[0]
            drifted = Command(command.text, command.expected.replace("is not set", "is missing"))
            with pytest.raises(DocsDrift, match=r"getting-started\.md:\d+ \(local-model no-key\)"):
                session.run(Block(no_key.page, no_key.line, "local-model", "no-key", (drifted,)))
        assert [r.model for r in server.requests] == [LOCAL_MODEL] * 7
        assert project.git("show", "ourobot/TICKET:calc.py") == "def add(a, b):\n    return a + b"


@pytest.mark.slow
def test_getting_started_path_a_the_app_against_the_sandbox(tmp_path: Path, bwrap: str):
    aliases = {
        "/tmp/ourobot-trial": str(tmp_path / "ourobot-trial"),
        "8765": str(free_port()),
        "3000": str(free_port()),
    }
    with Session(tmp_path, base_env(tmp_path / "home"), aliases) as session:
        run_all("path-a", session, {
            "sandbox": session.start,
            "manifest": session.run,
            "install": session.run,
            "serve": session.run,
            "pull": session.run,
            "checks": lambda block: session.run(block, retry_s=60),
        })  # fmt: skip
        # The drift issue 29 found: step 5 quoting a review title the program no longer prints.
        checks = blocks_of("path-a")["checks"]
        command = checks.commands[0]
        stale = re.sub(r'"title":"Not reviewed[^\n]*', '"title":"Reviewing 51e885c6ceeb"',
                       command.expected)  # fmt: skip
        assert stale != command.expected
        with pytest.raises(DocsDrift, match=r"-\"title\":\"Reviewing 51e885c6ceeb\""):
            session.run(Block(checks.page, checks.line, "path-a", "checks",
                              (Command(command.text, stale),)))  # fmt: skip


@pytest.mark.slow
def test_the_sandbox_page(tmp_path: Path):
    aliases = {"8765": str(free_port())}
    with Session(tmp_path, base_env(tmp_path / "home"), aliases) as session:
        run_all("sandbox", session, {"run": session.start})
