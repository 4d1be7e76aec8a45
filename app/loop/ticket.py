"""A ticket as the loop sees it: an id (the branch name), the key its spend counts against, and
its text and labels as they were when the cycle started.

In local mode a ticket is a UTF-8 file: Markdown, optionally opening with a front matter block

    ---
    id: TICKET-3
    title: Mean of an empty list
    labels: [bug]
    type: feature          # read as one more label
    ---

The id defaults to the file's name without its suffix; the title to the first `# ` heading.
All of it is untrusted text: fenced and stripped of hidden content before a model sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from app.errors import UserError

MAX_TICKET_BYTES = 1024 * 1024
_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Ticket:
    id: str  # letters, digits, '.', '_', '-': the branch is ourobot/<id>
    key: str  # what spend and ledger rows count against ("owner/repo#12", "local:/repo#T-3")
    title: str
    body: str
    labels: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """Title and body, as a model is shown them (fenced by the prompt)."""
        return f"# {self.title}\n\n{self.body}" if self.title else self.body

    def has_label(self, *names: str) -> bool:
        wanted = {name.casefold() for name in names}
        return any(label.casefold() in wanted for label in self.labels)


def read_ticket_file(path: Path, *, repo_key: str) -> Ticket:
    """A local ticket file; `UserError` (one line) when it cannot be used."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"--ticket {path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_TICKET_BYTES:
        raise UserError(f"--ticket {path}: larger than {MAX_TICKET_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"--ticket {path}: not valid UTF-8") from None
    meta, body = _front_matter(text, path)
    if not body.strip() and not meta.get("title"):
        raise UserError(f"--ticket {path}: the ticket is empty")
    ticket_id = str(meta.get("id") or _ID_CHARS.sub("-", path.stem).strip("-.") or "ticket")
    title = str(meta.get("title") or "")
    if not title:
        heading = next((ln for ln in body.splitlines() if ln.startswith("# ")), None)
        if heading is not None:
            title = heading[2:].strip()
            body = body.replace(heading + "\n", "", 1) if heading + "\n" in body else body
    labels = meta.get("labels") or []
    if isinstance(labels, str):
        labels = [part.strip() for part in labels.split(",")]
    if not isinstance(labels, list) or not all(isinstance(x, str | int) for x in labels):
        raise UserError(f"--ticket {path}: labels must be a list of names")
    names = [str(label) for label in labels if str(label).strip()]
    if meta.get("type"):
        names.append(str(meta["type"]))
    return Ticket(
        id=ticket_id,
        key=f"{repo_key}#{ticket_id}",
        title=title,
        body=body.strip() + "\n",
        labels=tuple(dict.fromkeys(names)),
    )


def _front_matter(text: str, path: Path) -> tuple[dict[str, object], str]:
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end == -1:
        return {}, text
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError:
        raise UserError(f"--ticket {path}: the front matter is not valid YAML") from None
    if not isinstance(meta, dict):
        raise UserError(f"--ticket {path}: the front matter must be a mapping")
    return {str(key): value for key, value in meta.items()}, text[end + 5 :]
