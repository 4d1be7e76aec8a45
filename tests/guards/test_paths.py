"""Canonical paths, unsafe paths, protected matching and symlink resolution, as pure functions."""

from __future__ import annotations

import pytest

from app.guards.paths import (
    ProtectedPaths,
    canonical_path,
    display,
    resolve_link,
    unsafe_reason,
)
from app.repo_config import DEFAULT_PROTECTED_PATHS

PROTECTED = ProtectedPaths(DEFAULT_PROTECTED_PATHS)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (".GitHub/Workflows/x.yml", ".github/workflows/x.yml"),
        (".git\u200bhub/workflows/x.yml", ".github/workflows/x.yml"),
        (".github./workflows /x.yml", ".github/workflows/x.yml"),
        ("\uff0egithub/workflows/x.yml", ".github/workflows/x.yml"),  # fullwidth full stop
        (".git::$INDEX_ALLOCATION/config", ".git/config"),
        ("GIT~1/config", ".git/config"),
        ("docs\\.env", "docs/.env"),
        ("./a//b", "a/b"),
    ],
)
def test_canonical_path_removes_filesystem_aliases(raw: str, canonical: str):
    assert canonical_path(raw) == canonical


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "absolute path"),
        ("C:/Windows/x", "absolute path"),
        ("../outside", "'..' component"),
        ("a/../../b", "'..' component"),
        ("a\\..\\b", "backslash"),
        (".git/config", "'.git' component"),
        ("sub/.GIT/hooks/pre-commit", "'.git' component"),
        (".git./config", "'.git' component"),
        (".git /config", "'.git' component"),
        ("GIT~1/config", "'.git' component"),
        (".git::$INDEX_ALLOCATION/config", "'.git' component"),
        (".g\u200cit/config", "invisible Unicode character U+200C"),
        ("docs/\u202eevil.txt", "invisible Unicode character U+202E"),
        ("a\x1b[31m.txt", "control character U+001B"),
        ("a\nb", "control character U+000A"),
        ("notes.txt.", "trailing dot or space"),
        ("PROGRA~1/x", "8.3 short-name alias"),
        ("file.txt::$DATA", "NTFS stream name"),
        ("\uff0egitmodules", "alias of the dot-file '.gitmodules'"),
        ("a//b", "empty path component"),
        ("bad\udcffname", "not valid UTF-8"),
        ("", "empty path"),
    ],
)
def test_unsafe_paths_are_named(path: str, reason: str):
    found = unsafe_reason(path)
    assert found is not None
    assert reason in found


@pytest.mark.parametrize(
    "path",
    [
        "app/secrets.py",
        "docs/env.md",
        ".gitignore",
        ".github/ISSUE_TEMPLATE/bug.md",
        "src/.DS_Store",
        "é/ü/naïve.txt",
        "a.b.c/d-e_f~g.txt",
        "backup~",
        "weird name with spaces.txt",
    ],
)
def test_ordinary_paths_are_safe(path: str):
    assert unsafe_reason(path) is None


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        (".github/workflows/ci.yml", ".github/workflows/**"),
        (".GitHub/Workflows/x.yml", ".github/workflows/**"),
        (".git\u200bhub/workflows/x.yml", ".github/workflows/**"),
        (".github./workflows./x.yml", ".github/workflows/**"),
        (".github /workflows/x.yml", ".github/workflows/**"),
        (".github/workflows", ".github/workflows/**"),  # replacing the directory itself
        (".github", ".github/workflows/**"),
        ("docs/CODEOWNERS", "CODEOWNERS"),
        (".github/codeowners", "CODEOWNERS"),
        ("deploy/.env", ".env"),
        ("deploy/.env.production", ".env.*"),
        ("deploy/.ENV.local", ".env.*"),
        ("secrets/db.txt", "secrets/**"),
        ("certs/server.PEM", "*.pem"),
        ("sub/.gitattributes", ".gitattributes"),
        (".gitmodules", ".gitmodules"),
        (".github/ourobot.yml", ".github/ourobot.yml"),
        (".github/ourobot/prompts/implementer.md", ".github/ourobot/**"),
    ],
)
def test_protected_paths_match_their_aliases(path: str, pattern: str):
    match = PROTECTED.match(path)
    assert match is not None
    assert match.pattern == pattern


@pytest.mark.parametrize(
    "path",
    [
        "app/secrets.py",
        "docs/env.md",
        "app/secrets/x.py",
        "environment.yml",
        "envs/.envrc",
        "key.py",
    ],
)
def test_near_misses_are_not_protected(path: str):
    assert PROTECTED.match(path) is None


def test_a_replacement_list_and_extras_are_honoured():
    protected = ProtectedPaths(["docs/**", "Makefile"])
    assert protected.match("DOCS/index.md") is not None
    assert protected.match("sub/makefile") is not None
    assert protected.match(".github/workflows/ci.yml") is None


def test_link_resolution_stays_inside_or_says_why_not():
    assert resolve_link("docs/link", "../README.md", {}).target == "README.md"
    assert resolve_link("a/b/link", "../../.github/workflows", {}).target == ".github/workflows"
    outside = resolve_link("link", "../etc/passwd", {})
    assert outside.target is None
    assert "outside the repository" in (outside.problem or "")
    assert resolve_link("link", "/etc/passwd", {}).target is None
    assert resolve_link("link", "a\\..\\..\\x", {}).target is None


def test_link_resolution_follows_chains_of_links():
    links = {"docs/hop": "../.github", "loop/a": "b", "loop/b": "a"}
    assert resolve_link("x", "docs/hop/workflows", links).target == ".github/workflows"
    looping = resolve_link("loop/start", "a", links)
    assert looping.target is None
    assert "too many links" in (looping.problem or "")


def test_display_escapes_what_a_terminal_would_interpret():
    assert display("a\x1b[31mb\u200bc") == "a\\u001b[31mb\\u200bc"
    assert len(display("x" * 1000, 50)) == 50
