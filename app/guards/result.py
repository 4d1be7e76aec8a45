"""What a guards run concludes, in the shapes its consumers need: the CLI's JSON, a check run's
summary (Markdown) and annotations, and the Action's step summary.

Paths and messages can carry text chosen by whoever wrote the PR, so every rendering escapes it
for its medium: Markdown cells cannot open links or HTML, and nothing invisible survives.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from app.guards.paths import display

RULE_IDS: tuple[str, ...] = (
    "deletions",
    "protected-path",
    "unsafe-path",
    "symlink",
    "submodule",
    "secret",
    "size",
    "binary",
    "test-tamper",
)

Conclusion = Literal["success", "failure"]
_MARKDOWN_SPECIAL = "\\*_{}[]|~<>&`"
_TABLE_ROWS = 100


@dataclass(frozen=True)
class Violation:
    rule: str
    path: str | None
    line: int | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "path": self.path, "line": self.line, "message": self.message}

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path or "", self.line or 0, RULE_IDS.index(self.rule), self.message)


@dataclass(frozen=True)
class GuardResult:
    violations: tuple[Violation, ...]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def conclusion(self) -> Conclusion:
        return "failure" if self.violations else "success"

    def to_dict(self) -> dict[str, Any]:
        """Exactly the `--json` document of DESIGN §3."""
        return {
            "conclusion": self.conclusion,
            "violations": [violation.to_dict() for violation in self.violations],
            "stats": self.stats,
        }

    def annotations(self) -> list[dict[str, Any]]:
        """GitHub check-run annotations, one per violation that names a file. GitHub takes at
        most 50 per request; the publisher batches them."""
        found = []
        for violation in self.violations:
            if not violation.path:
                continue
            line = violation.line or 1
            found.append(
                {
                    "path": _encodable(violation.path),
                    "start_line": line,
                    "end_line": line,
                    "annotation_level": "failure",
                    "message": violation.message,
                    "title": violation.rule,
                }
            )
        return found

    def summary_markdown(self) -> str:
        """What was evaluated, on which commits, against which config, and what failed."""
        stats = self.stats
        lines = [f"## ourobot/guards: {self.conclusion}", "", self._evaluated_line(), ""]
        rules = stats.get("rules") or []
        off = stats.get("rules_off") or []
        if rules:
            lines.append("Rules evaluated: " + ", ".join(f"`{rule}`" for rule in rules) + ".")
        if off:
            lines.append("Switched off by the config: " + ", ".join(f"`{r}`" for r in off) + ".")
        lines.append("")
        if not self.violations:
            lines.append("No violations.")
            return "\n".join(lines) + "\n"
        lines += [
            f"**{len(self.violations)} violation(s):**",
            "",
            "| Rule | Path | Line | Message |",
            "| --- | --- | --- | --- |",
        ]
        for violation in self.violations[:_TABLE_ROWS]:
            lines.append(
                f"| `{violation.rule}` | {markdown_cell(violation.path or '(whole change)')} "
                f"| {violation.line or ''} | {markdown_cell(violation.message)} |"
            )
        if len(self.violations) > _TABLE_ROWS:
            lines.append(f"\n…and {len(self.violations) - _TABLE_ROWS} more.")
        return "\n".join(lines) + "\n"

    def _evaluated_line(self) -> str:
        stats = self.stats
        what = {
            "repo": "the diff computed by ourobot from the repository",
            "worktree": "the worktree's changes",
            "diff": "the given diff",
        }.get(str(stats.get("source")), "the change")
        commits = ""
        if stats.get("base") and stats.get("head"):
            commits = f" from `{_sha(stats['base'])}` to `{_sha(stats['head'])}`"
            start = stats.get("merge_base")
            if start and start != stats["base"]:
                commits += f" (the changes since their merge base `{_sha(start)}`)"
        counts = (
            f"{stats.get('files', 0)} file(s), +{stats.get('added_lines', 0)} "
            f"−{stats.get('deleted_lines', 0)} lines, {stats.get('diff_bytes', 0)} bytes"
        )
        config = markdown_cell(str(stats.get("config", "defaults")))
        mode = stats.get("mode", "advanced")
        return f"Evaluated {what}{commits} ({counts}) with the config {config} (mode `{mode}`)."


def _encodable(path: str) -> str:
    """A path that is valid UTF-8 (a non-UTF-8 name survives only as surrogates)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _sha(value: object) -> str:
    text = str(value)
    return markdown_cell(text[:12])


def markdown_cell(text: str) -> str:
    """Untrusted text as inert Markdown: no links, HTML, emphasis, code spans or new rows.

    Each character that could start one is backslash-escaped, which Markdown allows for any
    ASCII punctuation; never an HTML entity: `ourobot's` must not read `ourobot&#x27;s` where a
    summary is shown as text (a terminal, a check title, a notification)."""
    shown = display(text, limit=500)
    return "".join("\\" + char if char in _MARKDOWN_SPECIAL else char for char in shown)
