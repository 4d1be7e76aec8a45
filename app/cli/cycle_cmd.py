"""`ourobot cycle`: the implementer loop on a local repository: its arguments only.

The implementation is `app.cli.cycle`, imported when the command runs, so building the parser
(`ourobot --help`) loads none of its dependencies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "cycle", help="work one ticket on a local repository: a tested branch ourobot/<ticket>"
    )
    parser.add_argument("--repo", required=True, type=Path, help="a local git repository")
    parser.add_argument("--ticket", required=True, type=Path, help="a file with the ticket")
    parser.add_argument(
        "--config",
        type=Path,
        help="a repo config file (default: .github/ourobot.yml at the default branch)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="after tests and review passed, ask to merge the branch (--no-ff)",
    )
    parser.add_argument(
        "--model", metavar="ID",
        help="the implementer's and planner's model (anthropic:<name> or openai:<name>) in "
        "place of the config's; its key from ANTHROPIC_API_KEY / OPENAI_API_KEY",
    )  # fmt: skip
    parser.add_argument(
        "--base-url", metavar="URL",
        help="where --model is served: an OpenAI-compatible server such as Ollama's "
        "http://127.0.0.1:11434/v1 (a local one needs no key)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.set_defaults(handler=deferred("app.cli.cycle", "cycle"))
