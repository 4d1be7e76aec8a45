"""`ourobot guards check`: the deterministic guards over a diff (DESIGN §3).

    ourobot guards check --repo DIR --base REV --head REV [--config FILE] [--json]
    ourobot guards check --diff FILE|- [--config FILE] [--json]

Exit 0 = no violations, 1 = violations, 2 = bad input (unreadable diff, invalid config, unknown
revision), with one line on stderr. `--json` prints exactly
`{"conclusion", "violations": [{"rule", "path", "line", "message"}], "stats"}`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from app.errors import UserError
from app.guards import GuardResult, check_diff, check_repo
from app.guards.paths import display
from app.guards.repo import GitFailed
from app.repo_config import RepoConfig, load_named_config_file, load_repo_config

EXIT_OK = 0
EXIT_VIOLATIONS = 1
# The diff is read whole; this bounds memory for input nobody could evaluate anyway.
MAX_DIFF_INPUT = 1024 * 1024 * 1024


def run_check(args: argparse.Namespace) -> int:
    config, source = _explicit_config(args.config)
    if args.repo is not None:
        if not args.base or not args.head:
            raise UserError("--repo needs both --base REV and --head REV")
        try:
            result = check_repo(args.repo, args.base, args.head, config, config_source=source)
        except GitFailed as exc:
            # A repository whose changes cannot be read is unreadable input, and no verdict.
            raise UserError(f"guards: cannot read the changes in {args.repo}: {exc}") from None
    else:
        if args.base or args.head:
            raise UserError("--base and --head go with --repo, not with --diff")
        result = check_diff(
            _read_diff(args.diff), config or load_repo_config(None), config_source=source
        )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(render_text(result))
    return EXIT_OK if result.conclusion == "success" else EXIT_VIOLATIONS


def _explicit_config(path: Path | None) -> tuple[RepoConfig | None, str]:
    if path is None:
        return None, "defaults"
    return load_named_config_file(path), str(path)


def _read_diff(name: str) -> bytes:
    if name == "-":
        data = sys.stdin.buffer.read(MAX_DIFF_INPUT + 1)
    else:
        try:
            with open(name, "rb") as handle:
                data = handle.read(MAX_DIFF_INPUT + 1)
        except OSError as exc:
            raise UserError(f"cannot read diff {name}: {exc.strerror or exc}") from None
    if len(data) > MAX_DIFF_INPUT:
        raise UserError(f"diff {name} is larger than {MAX_DIFF_INPUT} bytes")
    return data


def render_text(result: GuardResult) -> str:
    """A readable table; every untrusted string is escaped for the terminal."""
    stats = result.stats
    count = len(result.violations)
    head = f"ourobot guards: {result.conclusion}"
    if count:
        head += f" ({count} violation{'s' if count != 1 else ''})"
    span = ""
    if stats.get("base") and stats.get("head"):
        span = f" {str(stats['base'])[:12]}..{str(stats['head'])[:12]}"
    lines = [
        head,
        f"evaluated {stats.get('source')}{span}: {stats.get('files')} files, "
        f"+{stats.get('added_lines')} -{stats.get('deleted_lines')} lines, "
        f"{stats.get('diff_bytes')} bytes; config {display(str(stats.get('config')))} "
        f"(mode {stats.get('mode')})",
    ]
    if not count:
        return "\n".join(lines)
    rows = [("RULE", "WHERE", "MESSAGE")]
    for violation in result.violations:
        where = display(violation.path, 60) if violation.path else "(whole change)"
        if violation.line:
            where += f":{violation.line}"
        rows.append((violation.rule, where, display(violation.message, 300)))
    widths = [max(len(row[column]) for row in rows) for column in range(2)]
    lines.append("")
    for rule, where, message in rows:
        lines.append(f"{rule:<{widths[0]}}  {where:<{widths[1]}}  {message}")
    return "\n".join(lines)
