"""`ourobot config check FILE`: print the effective repo config or one error naming the key."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from app.cli import EXIT_OK
from app.repo_config import RepoConfig, load_repo_config, read_repo_config_text


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("config", help="repository configuration (.github/ourobot.yml)")
    actions = parser.add_subparsers(dest="config_command", metavar="ACTION")
    check = actions.add_parser("check", help="validate a config file; print the effective config")
    check.add_argument("file", help="path to .github/ourobot.yml (a missing file means defaults)")
    check.add_argument("--json", action="store_true", help="print the effective config as JSON")
    check.set_defaults(handler=check_config)


def check_config(args: argparse.Namespace) -> int:
    """Validate before printing anything: an invalid file prints nothing on stdout."""
    text = read_repo_config_text(Path(args.file))
    config = load_repo_config(text, source=args.file)
    if text is None:
        print(f"ourobot: {args.file}: not found; the defaults apply", file=sys.stderr)
    sys.stdout.write(render(config, as_json=args.json))
    return EXIT_OK


def render(config: RepoConfig, *, as_json: bool) -> str:
    """The effective config as a file that would load back to the same config."""
    document = config.to_document()
    if as_json:
        return json.dumps(document, indent=2) + "\n"
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
