"""Rust's tests, as cargo reads them: `fn test_x(`, `assert!` checks, `#[ignore]`."""

from __future__ import annotations

import re

from app.guards.tamper.lang.reader import CHECKS, Language, Marker, either

RUST = Language(
    name="rust",
    suffixes=(".rs",),
    comment="//",
    headers=(re.compile(r"^\s*(?:pub\s+)?(?:async\s+)?fn\s+(?P<n>test_\w+)\s*\("),),
    assertions=either(*CHECKS),
    markers=(Marker("decorator", re.compile(r"#\[ignore\b")),),
    skipping_decorator=re.compile(r"^#\[ignore\b"),
)
