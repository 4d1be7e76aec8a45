"""A panel review of a change in a local git repository: what `ourobot review check` runs.

Config, constitution and prompt overrides come from the base revision (or an explicit config
file); the diff from the merge base to the head; keys and endpoints from the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.errors import UserError
from app.repo_config import RepoConfig, load_named_config_file, load_repo_config
from reviewers.context import ReviewInputs, ReviewPrompt, build_review_prompt
from reviewers.git_source import (
    CONFIG_PATH,
    CONSTITUTION_PATH,
    PROMPT_OVERRIDE_DIR,
    Change,
    read_change,
    read_file_at,
)
from reviewers.panel import OnVerdict, PanelMember, ScopeRequest, run_panel, scope_review_for
from reviewers.prompts import load_template
from reviewers.providers import ProviderCredentials, build_client
from reviewers.repo_map import build_scope_prompt
from reviewers.result import PanelResult
from reviewers.untrusted import secrets_from_env

MAX_TICKET_BYTES = 1024 * 1024


@dataclass(frozen=True)
class LocalReview:
    """Everything prepared for a panel run, before any model is called."""

    change: Change
    config: RepoConfig
    prompt: ReviewPrompt
    scope_prompt: ReviewPrompt | None = None  # the scope reviewer's, with `context: max`


def read_ticket(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"--ticket {path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_TICKET_BYTES:
        raise UserError(f"--ticket {path}: larger than {MAX_TICKET_BYTES} bytes")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"--ticket {path}: not valid UTF-8") from None


def load_config(repo: Path, base_sha: str, config_file: Path | None) -> RepoConfig:
    """`--config FILE` if given (it must exist), else `.github/ourobot.yml` at the base."""
    if config_file is not None:
        return load_named_config_file(config_file)
    text = read_file_at(repo, base_sha, CONFIG_PATH, what="repo config")
    return load_repo_config(text, source=f"{base_sha[:12]}:{CONFIG_PATH}")


def prepare(
    repo: Path,
    base: str,
    head: str,
    *,
    ticket: str | None,
    config_file: Path | None,
    env: Mapping[str, str],
) -> LocalReview:
    """Read and render everything; raises `UserError` for bad input, calls no model."""
    change = read_change(repo, base, head)
    config = load_config(repo, change.base_sha, config_file)
    if not change.files:
        raise UserError(f"nothing to review: {head!r} makes no change to {base!r}")
    constitution = read_file_at(repo, change.base_sha, CONSTITUTION_PATH, what="constitution")
    override_path = f"{PROMPT_OVERRIDE_DIR}/reviewer.md"
    override = read_file_at(repo, change.base_sha, override_path, what="prompt override")
    template = load_template("reviewer", override, source=f"{change.base_sha[:12]}:{override_path}")
    inputs = ReviewInputs(
        base_sha=change.base_sha,
        head_sha=change.head_sha,
        files=change.files,
        graph=change.graph,
        ticket=ticket,
        constitution=constitution,
        project_name=config.project.name,
        project_description=config.project.description,
    )
    credentials = ProviderCredentials.from_env(env)
    secrets = (*credentials.secrets(), *secrets_from_env(env))
    prompt = build_review_prompt(
        inputs, template=template, max_diff_chars=config.review.max_diff_chars, secrets=secrets
    )
    scope_prompt = None
    if config.review.context == "max":
        scope_prompt = build_scope_prompt(
            repo,
            change,
            selection=prompt.selection,
            ticket=ticket,
            project_name=config.project.name,
            project_description=config.project.description,
            max_chars=config.review.max_diff_chars,
            secrets=secrets,
        )
    return LocalReview(change=change, config=config, prompt=prompt, scope_prompt=scope_prompt)


def run_local_review(
    prepared: LocalReview, env: Mapping[str, str], *, on_verdict: OnVerdict | None = None
) -> PanelResult:
    """The panel of `review.models` on the prepared prompt; with `context: max`, the first
    of them is also the scope reviewer."""
    credentials = ProviderCredentials.from_env(env)
    review = prepared.config.review
    members = [PanelMember(model.id, build_client(model, credentials)) for model in review.models]
    scope_request = None
    if prepared.scope_prompt is not None:
        scope_request = ScopeRequest(members[0], prepared.scope_prompt)
    return run_panel(
        members,
        prepared.prompt,
        quorum=review.quorum,
        timeout_s=review.timeout_s,
        base_sha=prepared.change.base_sha,
        head_sha=prepared.change.head_sha,
        scope=scope_review_for(review.context),
        scope_request=scope_request,
        on_verdict=on_verdict,
    )
