"""Changes the per-iteration destruction measure is judged on, shared by the guards' and the
loop's tests: honest work that replaces what it removes, and the rewrites of TICKET-004.

The refactor of `billing.py` removes 180 lines as `git diff` counts them, and destroys none:

- 40 call lines renamed (`compute_total` made `total_of`): modified lines, each replaced;
- the 60 lines of `Invoice`'s accessors written anew as 60 others: replaced in their hunk;
- 50 lines of rules moved to a new module, `billing_rules.py`, which `billing.py` imports;
- the 30 lines of `process` re-indented under a new `with` line.
"""

from __future__ import annotations

HEADER = ['"""Billing: totals, invoices and the rules behind them."""', "", "import math", ""]


def _report(name: str) -> list[str]:
    calls = [f"    value_{n} = {name}(items[{n}], rate={n})" for n in range(40)]
    return ["", "def report(items):", *calls, "    return locals()"]


def _invoice(new: bool) -> list[str]:
    lines = ["", "", "class Invoice:", "    def __init__(self, data):", "        self.data = data"]
    for n in range(30):
        if new:
            lines += [f"    def field_{n}(self) -> float:", f"        return self._field({n})"]
        else:
            lines += [f"    def field_{n}(self):", f"        return self.data[{n}] * {n}"]
    return lines


RULES = [
    line for n in range(25) for line in (f"def rule_{n}(x):", f"    return math.floor(x + {n})")
]


def _process(new: bool) -> list[str]:
    steps = [f"    batch.step_{n}(retries={n % 3})" for n in range(30)]
    body = ["    with batch.lock():", *("    " + step for step in steps)] if new else steps
    return ["", "", "def process(batch):", *body]


def _kept(name: str) -> list[str]:
    """A function the refactor leaves alone, between the parts it changes."""
    body = [f"    total = total + part * {n}" for n in range(6)]
    return ["", "", f"def {name}(part):", "    total = 0", *body, "    return total"]


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


BILLING = _text(
    [*HEADER, *RULES, *_kept("first"), *_report("compute_total"), *_kept("second"),
     *_invoice(False), *_kept("third"), *_process(False)]
)  # fmt: skip
BILLING_REFACTORED = _text(
    [*HEADER[:3], "from billing_rules import *  # noqa: F403", "", *_kept("first"),
     *_report("total_of"), *_kept("second"), *_invoice(True), *_kept("third"), *_process(True)]
)  # fmt: skip
BILLING_RULES = _text(['"""The rules billing applies."""', "", "import math", "", "", *RULES])


# An install guide of 300 lines (30 sections), and the same guide told again from memory: the
# headings and blank lines stay, every step is reworded, the length is the same.
def _guide(step: str) -> str:
    """30 sections of a heading, 8 steps (`step` formatted with the section and the step) and
    a blank line."""
    sections = [[f"# Section {k}", *(step.format(k, n) for n in range(8)), ""] for k in range(30)]
    return _text([line for section in sections for line in section])


INSTALL_GUIDE = _guide("Step {0}.{1}: run the installer for part {1} of {0}.")
INSTALL_FROM_MEMORY = _guide("For part {1} of {0}, the installer must run ({0}.{1}).")
