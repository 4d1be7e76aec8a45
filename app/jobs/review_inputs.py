"""What a review run in the App reads: the commits, the config, the ticket and the prompt.

The base branch and the PR head are fetched into the repository's bare mirror with a token
sent as a one-command header. Config, constitution and prompt override come from the **base
branch**, never the head. The ticket is the pull request's title and body (as the triggering
event carried them) and the issue it closes, if any. Every secret the worker holds is redacted
from the prompt: the model keys, the App's key and webhook secret, the git token, and the
values of secret-looking variables in the worker's environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from githubkit import GitHub
from githubkit.exception import RequestFailed

from app.errors import UserError
from app.repo_config import RepoConfig, load_repo_config
from app.settings import Settings
from app.workspace.mirror import RepoMirror
from reviewers.context import ReviewInputs, ReviewPrompt, build_review_prompt
from reviewers.git_source import (
    CONFIG_PATH,
    CONSTITUTION_PATH,
    PROMPT_OVERRIDE_DIR,
    Change,
    read_change,
    read_file_at,
)
from reviewers.obligations import Obligation
from reviewers.prompts import load_template
from reviewers.untrusted import secrets_from_env, strip_hidden

if TYPE_CHECKING:
    from reviewers.providers import ProviderCredentials

# "Closes #12", "fixes #3", "Resolved #7": GitHub's closing keywords, same repository only.
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d{1,9})\b", re.IGNORECASE
)
MAX_TICKET_CHARS = 60_000


@dataclass(frozen=True)
class PullInfo:
    """The facts about a pull request a review needs, read once from GitHub."""

    repo: str
    number: int
    state: str
    title: str
    body: str
    author: str
    author_is_bot: bool
    head_sha: str
    head_ref: str
    head_repo: str | None
    base_ref: str
    clone_url: str

    @classmethod
    def from_github(cls, repo: str, pull: Any) -> PullInfo:
        head_repo = getattr(pull.head, "repo", None)
        return cls(
            repo=repo,
            number=int(pull.number),
            state=str(pull.state),
            title=str(pull.title or ""),
            body=str(pull.body or ""),
            author=str(getattr(pull.user, "login", "") or ""),
            author_is_bot=getattr(pull.user, "type", None) == "Bot",
            head_sha=str(pull.head.sha),
            head_ref=str(pull.head.ref),
            head_repo=getattr(head_repo, "full_name", None),
            base_ref=str(pull.base.ref),
            clone_url=str(pull.base.repo.clone_url),
        )


def read_pull(github: GitHub[Any], repo: str, number: int) -> PullInfo:
    owner, _, name = repo.partition("/")
    return PullInfo.from_github(repo, github.rest.pulls.get(owner, name, number).parsed_data)


@dataclass(frozen=True)
class Fetched:
    path: Path  # the bare mirror
    base_sha: str  # the base branch's tip now


def fetch(settings: Settings, pull: PullInfo, head_sha: str, token: str) -> Fetched:
    """The base branch and `head_sha` in the mirror (raises `MirrorError` when git cannot)."""
    mirror = RepoMirror(settings.data_dir, pull.repo)
    base_sha = mirror.fetch_branch(pull.clone_url, pull.base_ref, token=token)
    mirror.fetch_pull_head(pull.clone_url, pull.number, head_sha, token=token)
    return Fetched(mirror.path, base_sha)


def config_at_base(fetched: Fetched) -> RepoConfig:
    """`.github/ourobot.yml` at the base branch (defaults when absent; `ConfigError` if bad)."""
    text = read_file_at(fetched.path, fetched.base_sha, CONFIG_PATH, what="repo config")
    return load_repo_config(text, source=f"{fetched.base_sha[:12]}:{CONFIG_PATH}")


# ---- the ticket -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ticket:
    key: str  # "owner/repo#N": what spend is counted against
    text: str  # for the model (untrusted: the prompt fences and strips it)


def linked_issue(body: str) -> int | None:
    """The first issue the PR body closes, read from what a person sees (hidden text and
    comments cannot redirect it)."""
    match = _CLOSING.search(strip_hidden(body))
    return int(match.group(1)) if match else None


def ticket_for(github: GitHub[Any], pull: PullInfo, *, title: str, body: str) -> Ticket:
    """The PR's own text and the issue it closes. Spend is counted against that issue (the
    implementer's ticket), or against the PR when it closes none."""
    parts = [f"Pull request #{pull.number}: {title}", "", body]
    number = linked_issue(body)
    key = f"{pull.repo}#{pull.number}"
    if number is not None and number != pull.number:
        issue = _issue(github, pull.repo, number)
        if issue is not None:
            key = f"{pull.repo}#{number}"
            parts += ["", f"Linked issue #{number}: {issue[0]}", "", issue[1]]
    text = "\n".join(parts).strip()
    return Ticket(key=key, text=text[:MAX_TICKET_CHARS])


def _issue(github: GitHub[Any], repo: str, number: int) -> tuple[str, str] | None:
    owner, _, name = repo.partition("/")
    try:
        issue = github.rest.issues.get(owner, name, number).parsed_data
    except RequestFailed as exc:
        if exc.response.status_code in (404, 410):
            return None
        raise
    if getattr(issue, "pull_request", None):
        return None  # a PR, not a ticket
    return str(issue.title or ""), str(issue.body or "")


# ---- the prompt -------------------------------------------------------------------------------


def credentials(settings: Settings) -> ProviderCredentials:
    """Model keys and endpoints from the operator's settings, never from the repository."""
    # Imported here: the model SDKs take seconds to import, and every worker imports this.
    from reviewers.providers import ProviderCredentials

    return ProviderCredentials(
        anthropic_api_key=_secret(settings.anthropic_api_key),
        anthropic_base_url=settings.anthropic_base_url,
        openai_api_key=_secret(settings.openai_api_key),
        openai_base_url=settings.openai_base_url,
    )


def _secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


def worker_secrets(
    settings: Settings, *, token: str | None, env: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """Every secret this worker holds, for redaction from anything a model sees."""
    found = [*credentials(settings).secrets()]
    found += [v for v in (_secret(settings.webhook_secret), token) if v]
    if settings.private_key is not None:
        found.append(settings.private_key.get_secret_value())
    found += secrets_from_env(os.environ if env is None else env)
    return tuple(found)


def constitution_at_base(fetched: Fetched) -> str | None:
    """The constitution at the base branch, whole (`UserError` if it cannot be used whole)."""
    return read_file_at(fetched.path, fetched.base_sha, CONSTITUTION_PATH, what="constitution")


def build_prompt(
    fetched: Fetched,
    change: Change,
    config: RepoConfig,
    ticket: Ticket,
    secrets: tuple[str, ...],
    obligations: tuple[Obligation, ...] = (),
) -> ReviewPrompt:
    """The panel's prompt: role and constitution from the base, ticket, bounded diff, and the
    open obligations of earlier rounds. Raises `UserError` for a policy file that cannot be
    used whole."""
    base = fetched.base_sha
    constitution = constitution_at_base(fetched)
    override_path = f"{PROMPT_OVERRIDE_DIR}/reviewer.md"
    override = read_file_at(fetched.path, base, override_path, what="prompt override")
    template = load_template("reviewer", override, source=f"{base[:12]}:{override_path}")
    inputs = ReviewInputs(
        base_sha=base,
        head_sha=change.head_sha,
        files=change.files,
        graph=change.graph,
        ticket=ticket.text,
        constitution=constitution,
        project_name=config.project.name,
        project_description=config.project.description,
        obligations=obligations,
    )
    return build_review_prompt(
        inputs, template=template, max_diff_chars=config.review.max_diff_chars, secrets=secrets
    )


def read_pull_change(fetched: Fetched, head_sha: str) -> Change:
    """The change as the PR shows it (merge base of the base branch and the head, to head)."""
    change = read_change(fetched.path, fetched.base_sha, head_sha)
    if not change.files:
        raise UserError(f"nothing to review: {head_sha[:12]} makes no change to the base")
    return change
