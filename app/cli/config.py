"""`ourobot config check FILE`: print the effective repo config or one error naming the key."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from app.cli import EXIT_OK
from app.repo_config import RepoConfig, load_repo_config, read_repo_config_text


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
