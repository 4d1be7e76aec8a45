"""The fingerprint of what the panel reviewed, and when a recorded verdict may be reused.

A verdict is about its inputs, not about a commit id: the diff as the pull request shows it,
the ticket text, the constitution, the config in force, the rendered role prompts (which hold
the prompt overrides and the project's name) and the roster. A new head with the same
fingerprint (an amended message, a rebase or a base merge that leaves the diff as it was) gets
the recorded verdict on its own SHA and no model is asked; a change to any input pays again.
Only a decisive verdict (approved or rejected) is reused: missing evidence is asked for again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from app.jobs.review_publish import Publication, StoredResult
from app.repo_config import RepoConfig
from reviewers.context import USER_TEMPLATE, ReviewPrompt
from reviewers.diff import FileDiff, file_heading

# Part of every fingerprint: a new way of judging in ourobot itself must not reuse old verdicts.
FINGERPRINT_VERSION = "1"
INPUT_NAMES = ("diff", "ticket", "constitution", "config", "prompts", "roster")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def diff_text(files: Sequence[FileDiff]) -> str:
    """The whole diff as rendered for a reviewer (every file, none left out for a budget)."""
    return "".join(
        file_heading(diff) + ("(binary)\n" if diff.binary else "")
        + "".join(hunk.render() for hunk in diff.hunks)
        for diff in files
    )  # fmt: skip


def input_digests(
    *,
    files: Sequence[FileDiff],
    ticket: str,
    constitution: str | None,
    config: RepoConfig,
    prompt: ReviewPrompt,
    scope_prompt: ReviewPrompt | None,
    shas: Sequence[str],
) -> dict[str, str]:
    """Each reviewed input's digest. `shas` (base, head, merge base) are masked in the
    rendered prompts: they name commits, and the same inputs under new ids are the same."""

    def masked(text: str) -> str:
        for sha in shas:
            text = text.replace(sha, "<commit>")
        return text

    prompts = [prompt.system, USER_TEMPLATE.text]
    if scope_prompt is not None:  # the scope reviewer's map is read at the head
        prompts += [scope_prompt.system, masked(scope_prompt.user)]
    roster = [model.model_dump(mode="json") for model in config.review.models]
    return {
        "diff": _digest(diff_text(files)),
        "ticket": _digest(ticket),
        "constitution": _digest(constitution if constitution is not None else "\0none"),
        "config": _digest(json.dumps(config.to_document(), sort_keys=True)),
        "prompts": _digest("\0".join(prompts)),
        "roster": _digest(
            json.dumps([roster, config.review.quorum, config.review.context], sort_keys=True)
        ),
    }


def fingerprint(inputs: Mapping[str, str]) -> str:
    return _digest(json.dumps([FINGERPRINT_VERSION, dict(sorted(inputs.items()))]))


def reusable(
    history: Sequence[StoredResult], fingerprint: str, head_sha: str
) -> Publication | None:
    """The newest decisive verdict on another head of this pull request with `fingerprint`."""
    for stored in reversed(history):
        pub = stored.publication
        if pub.decisive and pub.fingerprint == fingerprint and pub.head_sha != head_sha:
            return pub
    return None


def changed_since(history: Sequence[StoredResult], inputs: Mapping[str, str]) -> str:
    """Which inputs differ from the newest decisive verdict's, for the summary ("" if none)."""
    for stored in reversed(history):
        pub = stored.publication
        if pub.decisive and pub.inputs:
            names = [name for name in INPUT_NAMES if pub.inputs.get(name) != inputs.get(name)]
            if not names:
                return ""
            return f"reviewed again: the {', the '.join(names)} changed since `{pub.head_sha[:12]}`"
    return ""
