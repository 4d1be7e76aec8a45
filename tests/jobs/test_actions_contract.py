"""The contract between the App and its workflow (`implementer.runs_on: actions`) as plain data:
the dispatch's inputs, the report's text both ways, and every reason the App refuses one."""

from __future__ import annotations

import json

import pytest

from app.jobs.actions_contract import (
    CheckSeen,
    Dispatched,
    Report,
    ReportError,
    dispatch_inputs,
    parse_report,
    read_inputs,
    refusal,
    report_text,
)

HEAD = "a" * 40
OTHER = "b" * 40
KEY = "label:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"


def summary(**changes: object) -> dict:
    base = {
        "outcome": "ready", "reason": "ready", "head_sha": HEAD, "base_sha": OTHER,
        "execution": "ok", "objective": "met", "title": "t", "tests": "2 passed",
        "iterations": [{"number": 1, "phase": "implement", "edits": ["calc.py"],
                        "refusals": [], "tests": "2 passed"}],
        "model_calls": 1, "cost_micro_usd": 30,
    }  # fmt: skip
    base.update(changes)
    return base


def honest(**changes: object) -> Report:
    fields = {"run_key": KEY, "ticket": 5, "branch": "ourobot/issue-5", "run_id": 77}
    fields.update({k: v for k, v in changes.items() if k in fields})
    rest = {k: v for k, v in changes.items() if k not in fields}
    return Report(summary=summary(**rest), **fields)  # type: ignore[arg-type]


def check(**changes: object) -> CheckSeen:
    fields = {"name": "ourobot/cycle", "app_slug": "github-actions", "app_id": 15368,
              "external_id": KEY, "head_sha": HEAD, "status": "completed"}  # fmt: skip
    fields.update(changes)
    return CheckSeen(**fields)  # type: ignore[arg-type]


def judge(report: Report, *, seen: CheckSeen | None = None, branch_head: str | None = HEAD):
    return refusal(
        report,
        dispatched=Dispatched(5, KEY, 77),
        check=seen or check(),
        own_app_id=1003,
        branch_head=branch_head,
    )


def test_the_dispatch_carries_a_number_and_a_key_and_nothing_else():
    assert dispatch_inputs(5, KEY) == {"ticket": "5", "run_key": KEY}
    with pytest.raises(ValueError, match="not a dispatchable"):
        dispatch_inputs(5, "label:x; rm -rf /")


@pytest.mark.parametrize(
    "inputs",
    [
        None,
        {"ticket": "5"},
        {"ticket": True, "run_key": KEY},
        {"ticket": "-1", "run_key": KEY},
        {"ticket": "5 && curl x", "run_key": KEY},
        {"ticket": "5", "run_key": "$(curl evil)"},
        {"ticket": "5", "run_key": ""},
    ],
)
def test_the_run_refuses_inputs_the_app_does_not_send(inputs):
    with pytest.raises(ReportError):
        read_inputs(inputs)


def test_the_run_reads_the_apps_inputs_as_strings_or_numbers():
    assert read_inputs({"ticket": "5", "run_key": KEY}) == (5, KEY)
    assert read_inputs({"ticket": 5, "run_key": KEY}) == (5, KEY)


def test_a_report_reads_back_as_written_whatever_its_text_holds():
    sneaky = "done --> <!-- ourobot:cycle-report {} --> \u202e"
    text = report_text(honest(reason=sneaky, plan="--x"))
    assert text.count("-->") == 1  # nothing inside can end the hidden comment
    back = parse_report("A person's words first.\n" + text)
    assert back.summary["reason"] == sneaky and back.summary["plan"] == "--x"
    assert (back.run_key, back.ticket, back.branch, back.run_id) == (KEY, 5, "ourobot/issue-5", 77)
    assert back.head_sha == HEAD and back.outcome == "ready"


def test_a_long_report_is_cut_to_fit_a_check_run():
    many = [{"number": n, "phase": "x" * 1500, "edits": [], "refusals": [], "tests": "t"}
            for n in range(60)]  # fmt: skip
    text = report_text(honest(plan="p" * 3000, iterations=many))
    assert len(text) <= 60_100
    back = parse_report(text)
    assert back.summary["plan"] is None and 0 < len(back.summary["iterations"]) < 60


def _with(document: dict) -> str:
    return "<!-- ourobot:cycle-report " + json.dumps(document) + " -->"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (None, "no ourobot report"),
        ("just words", "no ourobot report"),
        ("<!-- ourobot:cycle-report {", "not closed"),
        ("<!-- ourobot:cycle-report nope -->", "not JSON"),
        (_with({"version": 2}), "not version 1"),
        (_with({"version": 1, "run_key": "a b", "ticket": 5, "branch": "x"}), "run_key"),
        (_with({"version": 1, "run_key": KEY, "ticket": "5", "branch": "x"}), "ticket"),
        (_with({"version": 1, "run_key": KEY, "ticket": 5, "branch": "x", "summary": {}}),
         "outcome"),
        (_with({"version": 1, "run_key": KEY, "ticket": 5, "branch": "x",
                "summary": summary(head_sha="HEAD")}), "head_sha is not a commit id"),
        (_with({"version": 1, "run_key": KEY, "ticket": 5, "branch": "x",
                "summary": summary(head_sha=None)}), "ready report names no head"),
        (_with({"version": 1, "run_key": KEY, "ticket": 5, "branch": "x",
                "summary": summary(execution="fine")}), "execution"),
        (_with({"version": 1, "run_key": KEY, "ticket": 5, "branch": "x",
                "summary": summary(notes=[1])}), "notes"),
    ],
)  # fmt: skip
def test_what_is_not_a_report(text, why):
    with pytest.raises(ReportError, match=why):
        parse_report(text)


def test_an_honest_report_is_accepted_and_a_blocked_one_needs_no_head():
    assert judge(honest()) is None
    assert judge(honest(outcome="blocked", head_sha=None), branch_head=None) is None


@pytest.mark.parametrize(
    ("report", "seen", "branch_head", "why"),
    [
        (honest(), check(name="ci/test"), HEAD, "not a completed ourobot/cycle"),
        (honest(), check(status="in_progress"), HEAD, "not a completed"),
        (honest(), check(app_slug="some-app", app_id=9), HEAD, "made by the App 'some-app'"),
        (honest(), check(external_id="label:other"), HEAD, "not about the run"),
        (honest(run_key="label:other"), check(), HEAD, "not about the run"),
        (honest(ticket=6), check(), HEAD, "about #6, not #5"),
        (honest(branch="main"), check(), HEAD, "another branch than ourobot/issue-5"),
        (honest(run_id=78), check(), HEAD, "comes from run 78, not run 77"),
        (honest(), check(head_sha=OTHER), HEAD, "the check run is on bbbbbbbbbbbb"),
        (honest(), check(), OTHER, "is at bbbbbbbbbbbb, not at the reported aaaaaaaaaaaa"),
        (honest(), check(), None, "is at nowhere"),
    ],
)
def test_what_the_app_refuses(report, seen, branch_head, why):
    assert why in (judge(report, seen=seen, branch_head=branch_head) or "")


def test_the_apps_own_check_run_is_a_workflow_using_its_token():
    assert judge(honest(), seen=check(app_slug="ourobot", app_id=1003)) is None
