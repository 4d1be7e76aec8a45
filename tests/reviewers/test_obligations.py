"""Findings as obligations: stable ids, strict RESOLVED/OPEN answers, the convergence rule and
location-less blockers, as plain functions and through `settle`."""

import pytest

from reviewers.obligations import (
    Obligation,
    RoundRules,
    Touched,
    assess,
    finding_id,
    for_implementer,
    next_obligations,
    still_open,
)
from reviewers.panel import settle
from reviewers.result import ModelVerdict
from reviewers.verdict import Answer, Finding, parse_verdict

A = "anthropic:claude-a"
ZERO = Finding("blocker", "calc/ops.py", 6, "divide(1, 0) raises ZeroDivisionError")
NAME = Finding("major", "calc/ops.py", 5, "divide is not documented")


def obligation(finding: Finding, *, blocking: bool = True) -> Obligation:
    return Obligation(
        finding_id(finding),
        finding.severity,
        finding.path,
        finding.line,
        finding.reason,
        A,
        1,
        "a" * 40,
        blocking,
    )


def test_a_finding_id_is_stable_and_names_place_severity_and_words():
    same = Finding("blocker", "calc/ops.py", 6, "  divide(1, 0)   raises ZeroDivisionError ")
    assert finding_id(ZERO) == finding_id(same)  # whitespace does not make a new finding
    assert finding_id(ZERO).startswith("F-") and len(finding_id(ZERO)) == 10
    assert finding_id(ZERO) != finding_id(Finding("major", "calc/ops.py", 6, ZERO.reason))
    assert finding_id(ZERO) != finding_id(Finding("blocker", "calc/ops.py", 7, ZERO.reason))
    assert finding_id(ZERO) != finding_id(NAME)


def test_every_asked_obligation_is_answered_exactly_once():
    one, two = obligation(ZERO), obligation(NAME)
    asked = {one.id: True, two.id: True}
    text = f"RESOLVED {one.id} b is checked now\nOPEN {two.id} still no docstring\nVERDICT: REJECT"
    parsed = parse_verdict(text, asked)
    assert parsed.verdict == "reject"
    assert parsed.answers == (
        Answer(one.id, "resolved", "b is checked now"),
        Answer(two.id, "open", "still no docstring"),
    )


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ("RESOLVED {one} fixed", "not answered with RESOLVED or OPEN: {two}"),
        ("RESOLVED {one} ok\nRESOLVED {one} ok\nOPEN {two} no", "answered twice"),
        ("RESOLVED {one} ok\nOPEN {two} no\nRESOLVED F-00000000 ok", "no such open obligation"),
        ("RESOLVED {one} ok\nOPEN {two}", "needs a reason"),
        ("RESOLVED {one} ok\nOPEN: {two} no", "expected 'RESOLVED <id> <why>'"),
        ("RESOLVED {one} ok\nOPEN {two} no docstring", "APPROVE leaves blocking obligation"),
    ],
    ids=["missing", "twice", "unknown", "no-reason", "malformed", "approve-while-open"],
)
def test_answers_that_do_not_parse_are_incomplete(lines, problem):
    one, two = obligation(ZERO), obligation(NAME)
    verdict = "APPROVE" if "APPROVE" in problem else "REJECT"
    text = lines.format(one=one.id, two=two.id) + f"\nVERDICT: {verdict}"
    parsed = parse_verdict(text, {one.id: True, two.id: True})
    assert parsed.verdict == "incomplete"
    assert problem.format(two=two.id) in parsed.problem


def test_an_answer_nobody_asked_for_is_incomplete_and_prose_is_not_an_answer():
    assert parse_verdict("RESOLVED F-12345678 done\nVERDICT: APPROVE").verdict == "incomplete"
    assert parse_verdict("Open question: none.\nVERDICT: APPROVE").verdict == "approve"


def test_an_advisory_obligation_may_stay_open_under_an_approval():
    item = obligation(NAME, blocking=False)
    parsed = parse_verdict(f"OPEN {item.id} still undocumented\nVERDICT: APPROVE", {item.id: False})
    assert parsed.verdict == "approve"


def test_a_finding_without_a_location_parses_and_is_advisory():
    parsed = parse_verdict("FINDING blocker - the design feels wrong\nVERDICT: REJECT")
    [finding] = parsed.findings
    assert (finding.located, finding.where) == (False, "(no location)")
    assert finding.as_dict()["path"] is None and finding.as_dict()["line"] is None
    assessed = assess(A, finding, RoundRules())
    assert not assessed.blocking and assessed.why == "names no path and line"
    # ... so a REJECT resting on it alone does not block
    verdict = settle(ModelVerdict(A, "reject", findings=parsed.findings), RoundRules())
    assert (verdict.verdict, verdict.said) == ("approve", "reject")


def test_a_blocker_naming_a_path_nowhere_in_the_repository_is_advisory():
    rules = RoundRules(known_path=lambda path: path == "calc/ops.py")
    assert assess(A, ZERO, rules).blocking
    ghost = Finding("blocker", "calc/ghost.py", 3, "this file is wrong")
    assert not assess(A, ghost, rules).blocking


def test_a_bare_reject_and_a_reject_with_a_real_blocker_still_block():
    assert settle(ModelVerdict(A, "reject"), RoundRules()).verdict == "reject"
    both = (ZERO, Finding("blocker", "", 0, "vague"))
    assert settle(ModelVerdict(A, "reject", findings=both), RoundRules()).verdict == "reject"


def test_convergence_new_findings_about_untouched_code_are_advisory_after_n_rounds():
    touched = Touched({"calc/ops.py": frozenset({6})})
    late = Finding("major", "calc/ops.py", 30, "add() should accept floats")
    near = Finding("major", "calc/ops.py", 8, "the new check returns the wrong type")
    early = RoundRules(round=2, converge_after=2, touched=touched)
    after = RoundRules(round=3, converge_after=2, touched=touched)
    assert assess(A, late, early).blocking  # within converge_after rounds: counts
    assert "did not touch" in assess(A, late, after).why
    assert assess(A, near, after).blocking  # about what the fix changed: counts
    unknown = RoundRules(round=3, converge_after=2, touched=None)
    assert assess(A, late, unknown).blocking  # nothing to compare with: fail closed
    never = RoundRules(round=9, converge_after=None, touched=touched)
    assert assess(A, late, never).blocking
    # an obligation raised earlier keeps blocking in late rounds
    kept = RoundRules(round=3, converge_after=2, touched=touched, obligations=(obligation(late),))
    assert assess(A, late, kept).blocking


def test_next_obligations_resolve_only_when_every_usable_answer_says_so():
    one, two = obligation(ZERO), obligation(NAME)
    rules = RoundRules(round=2, obligations=(one, two))
    answers = [
        [Answer(one.id, "resolved", "checked"), Answer(two.id, "open", "not yet")],
        [Answer(one.id, "resolved", "fine"), Answer(two.id, "resolved", "ok")],
    ]
    after = next_obligations(rules, answers, [], rejected=True, head_sha="b" * 40)
    status = {item.id: (item.status, item.answer) for item in after}
    assert status == {one.id: ("resolved", "checked; fine"), two.id: ("open", "not yet")}
    assert still_open(after) == (after[1],)
    silent = next_obligations(rules, [], [], rejected=False, head_sha="b" * 40)
    assert [item.status for item in silent] == ["open", "open"]  # no usable answer: open


def test_a_rejecting_round_adds_its_findings_and_an_approving_one_does_not():
    found = [assess(A, ZERO, RoundRules()), assess(A, Finding("nit", "a.py", 1, "x"), RoundRules())]
    added = next_obligations(RoundRules(), [], found, rejected=True, head_sha="c" * 40)
    assert [(item.id, item.blocking, item.raised_head) for item in added] == [
        (found[0].id, True, "c" * 40),
        (found[1].id, False, "c" * 40),
    ]
    assert next_obligations(RoundRules(), [], found, rejected=False, head_sha="c" * 40) == ()
    listing = for_implementer(added)
    assert found[0].id in listing and "calc/ops.py:6" in listing and "advisory" in listing


def test_obligations_round_trip_as_plain_data():
    item = obligation(ZERO)
    assert Obligation.from_dict(item.as_dict()) == item
