"""`ourobot config check [FILE]`: print the effective repo config or one error naming the key.

One rule for a missing config file, shared with `guards check --config` and `review check
--config` (DESIGN §3): a repository without `.github/ourobot.yml` gets the defaults, so
`ourobot config check` with no FILE in such a repository prints them (and says so on stderr);
a FILE named on the command line that does not exist is bad input (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from app.cli import EXIT_OK
from app.repo_config import (
    DEFAULT_SOURCE,
    RepoConfig,
    load_named_config_file,
    load_repo_config,
    read_repo_config_text,
)


def check_config(args: argparse.Namespace) -> int:
    """Validate before printing anything: an invalid file prints nothing on stdout."""
    if args.file is not None:
        config = load_named_config_file(Path(args.file))
    else:
        text = read_repo_config_text(Path(DEFAULT_SOURCE))
        config = load_repo_config(text, source=DEFAULT_SOURCE)
        if text is None:
            print(f"ourobot: no {DEFAULT_SOURCE} here; the defaults apply", file=sys.stderr)
    sys.stdout.write(render(config, as_json=args.json))
    return EXIT_OK


def render(config: RepoConfig, *, as_json: bool) -> str:
    """The effective config as a file that would load back to the same config."""
    document = config.to_document()
    if as_json:
        return json.dumps(document, indent=2) + "\n"
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
