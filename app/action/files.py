"""The files a GitHub Actions step writes its results to (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

from app.errors import UserError


def append_to(path: str | None, text: str) -> None:
    """Append `text` to the file Actions named; nothing when the variable was not set."""
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
