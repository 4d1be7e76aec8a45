"""`ourobot doctor`: one line per check; exit 0 when none failed, 1 naming what to fix."""

from __future__ import annotations

import argparse
import sys

from app.cli import EXIT_NEGATIVE, EXIT_OK
from app.errors import ConfigError
from app.install.doctor import run_checks
from app.settings import load_settings


def doctor(_: argparse.Namespace) -> int:
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"FAIL settings: {exc}", flush=True)
        return EXIT_NEGATIVE
    print("ok   settings: the OUROBOT_* environment loads", flush=True)
    failed = 0
    for check in run_checks(settings):
        print(check.line(), flush=True)
        failed += check.status == "FAIL"
    if failed:
        print(
            f"ourobot doctor: {failed} check(s) failed; fix them and run it again", file=sys.stderr
        )
        return EXIT_NEGATIVE
    return EXIT_OK
