"""`ourobot gate check`: the merge decision from a JSON snapshot of a pull request, offline.

Exit 0 = merge, 1 = not yet (something is missing), 2 = the state cannot be read at all (one
line on stderr). A broken field is not bad input: it fails the conditions that read it, and
the report names it. `--json` prints exactly `{"decision", "missing": [{"condition",
"reason"}]}`.
"""

from __future__ import annotations

import argparse
import json
import sys

from app.errors import UserError
from app.gate import Decision, decide, parse_state
from app.gate.load import MAX_STATE_BYTES
from app.guards.paths import display

EXIT_MERGE = 0
EXIT_WAIT = 1


def run_check(args: argparse.Namespace) -> int:
    name = "stdin" if args.state == "-" else args.state
    if args.state == "-":
        data = sys.stdin.buffer.read(MAX_STATE_BYTES + 1)
    else:
        try:
            with open(args.state, "rb") as handle:
                data = handle.read(MAX_STATE_BYTES + 1)
        except OSError as exc:
            raise UserError(f"cannot read the state {name}: {exc.strerror or exc}") from None
    decision = decide(parse_state(data, source=f"state {name}"))
    if args.json:
        print(json.dumps(decision.to_dict(), indent=2))
    else:
        print(render_text(decision))
    return EXIT_MERGE if decision.merge else EXIT_WAIT


def render_text(decision: Decision) -> str:
    head = decision.head_sha or "(unreadable)"
    lines = [f"ourobot gate: {decision.verdict} (head {display(head, 64)})"]
    width = max(len(c.name) for c in decision.conditions)
    for condition in decision.conditions:
        mark = "met    " if condition.met else "MISSING"
        lines.append(f"  {mark}  {condition.name:<{width}}  {display(condition.reason, 500)}")
    return "\n".join(lines)
