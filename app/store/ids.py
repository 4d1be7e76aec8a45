"""The integer ranges the store's id columns hold, checked where a value enters.

Every backend the store runs on (SQLite, PostgreSQL) keeps a `BigInteger` column as a signed
64-bit integer and an `Integer` column, portably, as a signed 32-bit one. A value outside its
column's range does not fail where it came in but where it is written, as a driver's overflow
error, which the receiver can only read as "the inbox is down" (a 503, retried by GitHub for
ever). So every id a caller hands the store is checked first, and refused as bad input.
"""

from __future__ import annotations

from typing import Literal

Width = Literal["big", "int"]

_RANGES: dict[Width, tuple[int, int]] = {
    "big": (-(2**63), 2**63 - 1),  # BigInteger; also SQLite's whole integer range
    "int": (-(2**31), 2**31 - 1),  # Integer, as PostgreSQL keeps it
}


class IdOutOfRange(ValueError):
    """An id the store could not keep in its column."""


def checked_id(name: str, value: int | None, width: Width = "big") -> int | None:
    """`value` when its column can hold it (None stays None); IdOutOfRange otherwise. GitHub's
    ids and numbers are positive, so zero and negatives are refused as well."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise IdOutOfRange(f"{name} is not an integer")
    low, high = _RANGES[width]
    if not (max(low, 1) <= value <= high):
        raise IdOutOfRange(f"{name} {value} is outside the range the store keeps (1 to {high})")
    return value
