"""Ids are range-checked where they enter the store, not where the driver overflows."""

from __future__ import annotations

import pytest

from app.controls.ledger import Subject
from app.store.ids import IdOutOfRange, checked_id
from app.webhooks.inbox import Delivery


@pytest.mark.parametrize("value", [2**63, -(2**63), 0, -5, 10**30, True, "1"])
def test_a_value_no_bigint_column_holds_is_refused(value: object):
    with pytest.raises(IdOutOfRange, match="installation id"):
        checked_id("installation id", value)  # type: ignore[arg-type]


def test_the_edges_of_each_column_are_kept():
    assert checked_id("x", 2**63 - 1) == 2**63 - 1
    assert checked_id("x", 1) == 1
    assert checked_id("x", None) is None
    assert checked_id("n", 2**31 - 1, "int") == 2**31 - 1
    with pytest.raises(IdOutOfRange):
        checked_id("n", 2**31, "int")


def test_the_records_that_reach_the_store_check_their_ids():
    with pytest.raises(IdOutOfRange):
        Delivery("d", "issues", "opened", 2**63, b"{}")
    with pytest.raises(IdOutOfRange):
        Subject("key", installation_id=2**64)
    with pytest.raises(IdOutOfRange):
        Subject("key", installation_id=1, number=2**31)
    assert Subject("key", installation_id=2**63 - 1, number=2**31 - 1).number == 2**31 - 1
