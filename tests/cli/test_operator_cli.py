"""`ourobot status`, `ourobot ledger` and `ourobot patterns` through the real console script,
on an empty store and on a seeded one; bad filters are one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from app.controls.ledger import Ledger, ModelCall, Subject
from app.controls.pricing import PriceTable, TokenPrices
from app.settings import Settings
from app.store import Store
from reviewers.model_client import Usage
from tests.plugins.ledger_seed import INSTALLATION, REPO, seed_ledger

OUROBOT = os.path.join(os.path.dirname(sys.executable), "ourobot")


def run(data_dir, *args, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OUROBOT_")}
    env.update({"OUROBOT_DATA_DIR": str(data_dir), **env_extra})
    return subprocess.run(
        [OUROBOT, *args], capture_output=True, text=True, env=env, check=False, timeout=60
    )


@pytest.fixture
def seeded(tmp_path):
    store = Store.open(Settings(data_dir=tmp_path, database_url=None))
    store.migrate()
    try:
        yield seed_ledger(store, datetime.now(UTC))
    finally:
        store.close()


def test_every_command_answers_on_an_empty_store(tmp_path):
    status = run(tmp_path, "status", "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["mode"] == "embedded"
    assert shown["queues"]["inbox"] == {"pending": 0, "running": 0, "done": 0, "failed": 0}
    assert shown["halts"] == [] and shown["open_cycles"] == []
    assert json.loads(run(tmp_path, "ledger", "--json").stdout) == {"entries": []}
    assert json.loads(run(tmp_path, "patterns", "--json").stdout) == {"patterns": []}
    assert run(tmp_path, "ledger").stdout == "no ledger rows match\n"
    assert run(tmp_path, "patterns").stdout == "no failure classes recorded\n"
    assert "halts: none" in run(tmp_path, "status").stdout


def test_status_shows_the_seeded_cycles_halt_and_spend(tmp_path, seeded):
    assert run(tmp_path, "halt", "--installation", str(INSTALLATION), "--by", "ann").returncode == 0
    proc = run(tmp_path, "status", "--json", OUROBOT_CAP_USD_PER_DAY="2")
    shown = json.loads(proc.stdout)
    assert [c["ticket"] for c in shown["open_cycles"]] == [f"{REPO}#5"]
    assert [h["set_by"] for h in shown["halts"]] == ["ann"]
    assert shown["spend_today"]["by_installation_micro_usd"] == {str(INSTALLATION): 1_200_000}
    assert shown["spend_today"]["cap_usd_per_day"] == 2.0
    text = run(tmp_path, "status", OUROBOT_CAP_USD_PER_DAY="2").stdout
    assert f"HALTED installation:{INSTALLATION} by ann" in text
    assert "spend today: $1.2000 (cap $2.0000 per installation)" in text
    assert f"{REPO}#5 PR #7 ready" in text


def test_ledger_filters_from_the_command_line(tmp_path, seeded):
    def entries(*args):
        proc = run(tmp_path, "ledger", "--json", *args)
        assert proc.returncode == 0, proc.stderr
        return [e["id"] for e in json.loads(proc.stdout)["entries"]]

    ids = seeded.ids
    assert entries("--outcome", "merged") == [ids["merge2"]]
    assert entries("--ticket", f"{REPO}#2", "--outcome", "review=rejected") == [
        ids["review-reject"]
    ]
    assert entries("--repo", REPO, "--ticket", "1") == [ids["cycle1"]]
    assert entries("--kind", "cycle", "--outcome", "unmet") == [ids["blocked3"], ids["blocked4"]]
    assert entries("--outcome", "infra") == [ids["fetch"]]
    assert entries("--since", "1d", "--outcome", "infra") == []
    assert entries("--until", "1d") == [ids["fetch"]]
    [row] = json.loads(run(tmp_path, "ledger", "--json", "--outcome", "merged").stdout)["entries"]
    assert row["outcome"] == {
        "execution": "ok", "objective": "met", "review": "skipped", "artifact": "merged"
    }  # fmt: skip
    line = run(tmp_path, "ledger", "--outcome", "merged").stdout
    assert "merge" in line and f"{REPO}#2" in line and "artifact=merged" in line


def test_patterns_from_the_command_line(tmp_path, seeded):
    shown = json.loads(run(tmp_path, "patterns", "--json").stdout)["patterns"]
    assert [(p["error_class"], p["count"]) for p in shown][:2] == [
        ("iterations", 2), ("refusal:deletions", 2)
    ]  # fmt: skip
    deletions = shown[1]
    assert deletions["first"]["ledger_id"] == seeded.ids["blocked3"]
    assert deletions["last"]["ledger_id"] == seeded.ids["blocked4"]
    assert "review:fetch" in {p["error_class"] for p in shown}
    recent = json.loads(run(tmp_path, "patterns", "--json", "--since", "1d").stdout)
    assert "review:fetch" not in {p["error_class"] for p in recent["patterns"]}
    mine = json.loads(run(tmp_path, "patterns", "--json", "--repo", REPO).stdout)["patterns"]
    assert {p["first"]["repo"] for p in mine} == {REPO}
    text = run(tmp_path, "patterns").stdout
    assert "    2  refusal:deletions  (recurring)" in text


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("ledger", "--outcome", "mergd"), "--outcome 'mergd': not an outcome"),
        (("ledger", "--outcome", "review=merged"), "review is one of"),
        (("ledger", "--ticket", "7"), "a bare number needs --repo"),
        (("ledger", "--repo", "no-slash"), "--repo 'no-slash': expected owner/name"),
        (("ledger", "--since", "last tuesday"), "--since 'last tuesday'"),
        (("ledger", "--since", "1h", "--until", "2h"), "--since must be before --until"),
        (("ledger", "--kind", "party"), "--kind 'party'"),
        (("ledger", "--limit", "0"), "--limit 0"),
        (("patterns", "--since", "soon"), "--since 'soon'"),
        (("status", "--verbose"), "unrecognized arguments"),
    ],
)
def test_bad_filters_are_one_line_and_exit_2(tmp_path, args, says):
    proc = run(tmp_path, *args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert says in proc.stderr
    assert proc.stdout == ""


def test_an_unreachable_database_is_one_line_exit_2(tmp_path):
    proc = run(tmp_path, "status", OUROBOT_DATABASE_URL="postgresql://nobody@127.0.0.1:1/none")
    assert proc.returncode == 2
    assert proc.stderr.startswith("ourobot: OUROBOT_DATABASE_URL: cannot open the database")
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize("command", ["ledger", "status", "patterns"])
def test_a_data_dir_that_does_not_exist_is_one_line_and_exit_2(tmp_path, command):
    """A typo in OUROBOT_DATA_DIR is said, not answered from a new empty store."""
    typo = tmp_path / "ourobot-dta"
    proc = run(typo, command)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"ourobot: OUROBOT_DATA_DIR {typo}: no such folder, so no ")
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not typo.exists()  # nothing created


def test_status_says_which_spend_is_not_real_dollars(tmp_path):
    """Calls to models priced 0 (scripted, local) are at no cost; calls to a model nobody
    priced are charged at the dearest price, and said to be."""
    store = Store.open(Settings(data_dir=tmp_path, database_url=None))
    store.migrate()
    prices = PriceTable({"anthropic:demo-*": TokenPrices(0, 0)})
    usage = Usage(input_tokens=1000, output_tokens=100)
    try:
        for model in ("anthropic:demo-claude", "anthropic:demo-claude", "openai:qwen2.5"):
            price = prices.price(model)
            call = ModelCall("implementer", model, "ok", usage,
                             price.prices.cost_micro_usd(usage), model, price=price)  # fmt: skip
            Ledger(store).record_call(Subject(f"cycle:{model}"), call)
    finally:
        store.close()
    text = run(tmp_path, "status").stdout
    assert "spend today: $0.0225" in text  # the unpriced model at $15/$75 per million
    assert (
        "  at no cost (priced 0 by OUROBOT_MODEL_PRICES: scripted or local models): "
        "anthropic:demo-claude (2 calls)"
    ) in text
    assert (
        "  of which charged at the dearest price, no price known (set OUROBOT_MODEL_PRICES): "
        "openai:qwen2.5 $0.0225"
    ) in text
    spend = json.loads(run(tmp_path, "status", "--json").stdout)["spend_today"]
    assert spend["free_calls_by_model"] == {"anthropic:demo-claude": 2}
    assert spend["unpriced_micro_usd_by_model"] == {"openai:qwen2.5": 22_500}
