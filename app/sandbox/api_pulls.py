"""REST routes for pull requests: create, get (JSON or diff), list, update, files, commits,
reviews (with inline comments), review dismissal and merging.

GitHub's limits are kept because ourobot must treat them as "cannot evaluate": the file list
stops at 3,000 files, and the diff media type answers 406 past 20,000 lines or 300 files.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.routing import Route

from app.sandbox import auth, events, pulls, pushes
from app.sandbox.api_issues import edit_text, find_issue, set_state
from app.sandbox.gitops import MergeConflict, RefUpdate
from app.sandbox.protection import merge_refusal
from app.sandbox.routing import (
    ApiError,
    Call,
    Reply,
    Services,
    actor,
    find_repo,
    find_repo_checked,
    invalid,
    not_found,
    paginate,
    rest_route,
)
from app.sandbox.serializers import (
    commit_json,
    diff_entry_json,
    pull_simple_json,
    review_comment_json,
    review_json,
)
from app.sandbox.state import Issue, Pull, Repo, Review, ReviewComment, User

DIFF_MEDIA = ("application/vnd.github.diff", "application/vnd.github.v3.diff")
MAX_DIFF_LINES = 20_000
MAX_DIFF_FILES = 300
MERGE_METHODS = ("merge", "squash", "rebase")
REVIEW_EVENTS = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def find_pull(call: Call, repo: Repo) -> tuple[Issue, Pull]:
    issue = find_issue(call, repo)
    if issue.pull is None:
        raise not_found()
    return issue, issue.pull


def _custom(resource: str, message: str) -> ApiError:
    return ApiError(
        422,
        "Validation Failed",
        errors=[{"resource": resource, "code": "custom", "message": message}],
    )


# ----- create, list, get, update ------------------------------------------------------------------
def _branch_name(repo: Repo, value: Any, field_name: str) -> str:
    if not isinstance(value, str) or not value:
        raise invalid("PullRequest", field_name, "missing_field")
    owner, sep, branch = value.rpartition(":")
    if sep and owner.lower() != repo.owner.login.lower():
        raise invalid("PullRequest", field_name)  # no forks in the sandbox
    return branch


def create_pull(call: Call) -> Reply:
    repo = find_repo(call)
    sender = actor(call)
    title = call.json_field("title")
    if not isinstance(title, str) or not title:
        raise invalid("PullRequest", "title", "missing_field")
    head_ref = _branch_name(repo, call.json_field("head"), "head")
    base_ref = _branch_name(repo, call.json_field("base"), "base")
    git = call.sb.git(repo)
    head_sha = git.resolve(f"refs/heads/{head_ref}")
    base_sha = git.resolve(f"refs/heads/{base_ref}")
    if base_sha is None:
        raise invalid("PullRequest", "base")
    if head_sha is None:
        raise invalid("PullRequest", "head")
    if any(
        i.pull.base_ref == base_ref for i in pulls.open_pulls_with_head(repo, head_ref) if i.pull
    ):
        raise _custom(
            "PullRequest", f"A pull request already exists for {repo.owner.login}:{head_ref}."
        )
    if git.merge_base(base_sha, head_sha) == head_sha:
        raise _custom("PullRequest", f"No commits between {base_ref} and {head_ref}")
    now = call.state.now()
    pull = Pull(
        call.state.next_id(),
        head_ref,
        head_sha,
        base_ref,
        base_sha,
        draft=bool(call.json_field("draft", False)),
    )
    issue = Issue(
        call.state.next_id(),
        repo.next_number,
        sender,
        title,
        call.json_field("body"),
        now,
        now,
        pull=pull,
    )
    repo.next_number += 1
    repo.issues[issue.number] = issue
    git.update_ref(f"refs/pull/{issue.number}/head", head_sha)
    events.pull_request(call.sb, "opened", repo, issue, sender)
    call.sb.ci.trigger(repo, head_sha)
    return Reply(201, pulls.full_json(call.state, repo, issue))


def list_pulls(call: Call) -> Reply:
    repo = find_repo(call)
    wanted = call.query.get("state", "open")
    head = call.query.get("head", "").rpartition(":")[2]
    base = call.query.get("base")
    found = [
        i
        for i in repo.issues.values()
        if i.pull is not None
        and wanted in ("all", i.state)
        and (not head or i.pull.head_ref == head)
        and (not base or i.pull.base_ref == base)
    ]
    found.sort(key=lambda i: i.number, reverse=call.query.get("direction", "desc") == "desc")
    url = f"{call.state.base_url}/repos/{repo.full_name}/pulls"
    chunk, headers = paginate(call, found, url)
    body = [pull_simple_json(call.state, repo, i, i.pull) for i in chunk if i.pull]
    return Reply(body=body, headers=headers)


def get_pull(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    if call.accepts(*DIFF_MEDIA):
        return _diff(call, repo, issue, pull)
    body = pulls.full_json(call.state, repo, issue)
    if pull.unknown_mergeable_reads > 0:
        pull.unknown_mergeable_reads -= 1
        body.update(mergeable=None, mergeable_state="unknown")
    return Reply(body=body)


def _diff(call: Call, repo: Repo, issue: Issue, pull: Pull) -> Reply:
    if len(pulls.files(repo, issue, pull)) > MAX_DIFF_FILES:
        raise ApiError(
            406,
            f"Sorry, the diff exceeded the maximum number of files ({MAX_DIFF_FILES}). Consider "
            "using 'List pull requests files' API or locally cloning the repository instead.",
            errors=[{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
        )
    text = call.sb.git(repo).diff_text(pulls.base_sha(repo, issue, pull), pull.head_sha)
    if text.count("\n") > MAX_DIFF_LINES:
        raise ApiError(
            406,
            f"Sorry, the diff exceeded the maximum number of lines ({MAX_DIFF_LINES}). Consider "
            "using 'List pull requests files' API or locally cloning the repository instead.",
            errors=[{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
        )
    return Reply(raw=text.encode(), media_type="application/vnd.github.diff; charset=utf-8")


def update_pull(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    sender = actor(call)
    if issue.user.id != sender.id and not auth.can(call.state, call.identity, repo, "triage"):
        raise ApiError(
            403,
            "Resource not accessible by integration"
            if call.identity.kind == "installation"
            else "Must have push access",
        )
    edit_text(call, repo, issue, sender)
    base = call.json_field("base")
    if base is not None and base != pull.base_ref:
        if call.sb.git(repo).resolve(f"refs/heads/{base}") is None:
            raise invalid("PullRequest", "base")
        changes = {"base": {"ref": {"from": pull.base_ref}, "sha": {"from": pull.base_sha}}}
        pull.base_ref = base
        events.pull_request(call.sb, "edited", repo, issue, sender, changes=changes)
    state = call.json_field("state")
    if state is not None:
        if state not in ("open", "closed") or (state == "open" and pull.merged):
            raise invalid("PullRequest", "state")
        set_state(call, repo, issue, state, sender)
    return Reply(body=pulls.full_json(call.state, repo, issue))


def list_files(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    changes = pulls.files(repo, issue, pull)[: pulls.FILES_CAP]
    url = f"{call.state.base_url}/repos/{repo.full_name}/pulls/{issue.number}/files"
    chunk, headers = paginate(call, changes, url)
    body = [diff_entry_json(call.state, repo, pull.head_sha, c) for c in chunk]
    return Reply(body=body, headers=headers)


def list_commits(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    infos = pulls.commits(repo, issue, pull)[:250]
    url = f"{call.state.base_url}/repos/{repo.full_name}/pulls/{issue.number}/commits"
    chunk, headers = paginate(call, infos, url)
    return Reply(body=[commit_json(call.state, repo, c) for c in chunk], headers=headers)


# ----- reviews ------------------------------------------------------------------------------------
def _place(patch: str | None, line: int, side: str) -> tuple[str, int] | None:
    """Where `line` on `side` sits in a file's diff: the hunk text up to it, and its `position`
    (GitHub counts lines down from the file's first `@@` header, later headers included, the
    line below the first header being 1). None if the line is not in the diff."""
    if patch is None:
        return None
    hunk: list[str] = []
    old = new = position = 0
    for text in patch.splitlines():
        if hunk:
            position += 1
        match = _HUNK.match(text)
        if match:
            hunk, old, new = [text], int(match.group(1)), int(match.group(3))
            continue
        if not hunk:
            continue
        hunk.append(text)
        marker = text[:1]
        if marker in ("-", " ") and side == "LEFT" and old == line:
            return "\n".join(hunk), position
        if marker in ("+", " ") and side == "RIGHT" and new == line:
            return "\n".join(hunk), position
        if marker in ("-", " "):
            old += 1
        if marker in ("+", " "):
            new += 1
    return None


def _review_refused(reason: str) -> ApiError:
    """A review GitHub will not create: its 422 lists plain strings (`validation-error-simple`
    in its description), as "Line could not be resolved" does, not error objects."""
    return ApiError(422, "Unprocessable Entity", errors=[reason])


def _review_comments(
    call: Call, repo: Repo, issue: Issue, commit_id: str, review_id: int, sender: User
) -> list[ReviewComment]:
    raw = call.json_field("comments") or []
    if not isinstance(raw, list):
        raise _review_refused("comments must be a list")
    pull = issue.pull
    assert pull is not None
    by_path = {c.filename: c for c in pulls.files_at(repo, issue, pull, commit_id)}
    made = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("body"), str):
            raise _review_refused("a review comment needs a body")
        change = by_path.get(str(item.get("path")))
        if change is None:
            raise ApiError(422, "Unprocessable Entity", errors=["Path could not be resolved"])
        side = str(item.get("side") or "RIGHT").upper()
        line = item.get("line")
        placed = _place(change.patch, line, side) if isinstance(line, int) else None
        if placed is None or not isinstance(line, int):
            raise ApiError(422, "Unprocessable Entity", errors=["Line could not be resolved"])
        hunk, position = placed
        start = item.get("start_line")
        made.append(
            ReviewComment(
                call.state.next_id(),
                review_id,
                sender,
                item["body"],
                change.filename,
                line,
                side,
                start if isinstance(start, int) else None,
                commit_id,
                hunk,
                call.state.now(),
                position,
            )
        )
    return made


def create_review(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    sender = actor(call)
    event = call.json_field("event")
    if event is not None and event not in REVIEW_EVENTS:
        raise _review_refused(f"event must be one of {', '.join(REVIEW_EVENTS)}")
    body = call.json_field("body") or ""
    if not isinstance(body, str):
        raise _review_refused("body must be a string")
    if event in ("REQUEST_CHANGES", "COMMENT") and not body:
        # GitHub documents `body` as required for these two events; inline comments alone
        # do not stand in for it.
        raise _review_refused("Body can't be blank")
    if issue.user.id == sender.id and event in ("APPROVE", "REQUEST_CHANGES"):
        verb = "approve" if event == "APPROVE" else "request changes on"
        raise ApiError(
            422, "Unprocessable Entity", errors=[f"Can not {verb} your own pull request"]
        )
    commit_id = call.json_field("commit_id") or pull.head_sha
    if not isinstance(commit_id, str) or call.sb.git(repo).resolve(commit_id) is None:
        raise _review_refused("commit_id does not name a commit of this repository")
    review_id = call.state.next_id()
    comments = _review_comments(call, repo, issue, commit_id, review_id, sender)
    state = REVIEW_EVENTS[event] if event else "PENDING"
    review = Review(
        review_id,
        sender,
        body,
        state,
        commit_id,
        None if state == "PENDING" else call.state.now(),
        comments,
    )
    pull.reviews.append(review)
    if state != "PENDING":
        events.pull_request_review(call.sb, "submitted", repo, issue, review, sender)
    return Reply(200, review_json(call.state, repo, issue, review))


def list_reviews(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    url = f"{call.state.base_url}/repos/{repo.full_name}/pulls/{issue.number}/reviews"
    chunk, headers = paginate(call, pull.reviews, url)
    body = [review_json(call.state, repo, issue, r) for r in chunk]
    return Reply(body=body, headers=headers)


def _find_review(call: Call, pull: Pull) -> Review:
    wanted = call.params["review_id"]
    review = next((r for r in pull.reviews if str(r.id) == wanted), None)
    if review is None:
        raise not_found()
    return review


def get_review(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    return Reply(body=review_json(call.state, repo, issue, _find_review(call, pull)))


def _dismissal_body(call: Call) -> None:
    if not isinstance(call.json_field("message"), str):
        raise invalid("PullRequestReview", "message", "missing_field")


def dismiss_review(call: Call) -> Reply:
    repo = find_repo_checked(call, "write", _dismissal_body)
    issue, pull = find_pull(call, repo)
    review = _find_review(call, pull)
    if review.state not in ("APPROVED", "CHANGES_REQUESTED"):
        kind = "pending" if review.state == "PENDING" else "commented"
        raise ApiError(422, f"Can not dismiss a {kind} pull request review")
    review.state = "DISMISSED"
    events.pull_request_review(call.sb, "dismissed", repo, issue, review, actor(call))
    return Reply(body=review_json(call.state, repo, issue, review))


def list_review_comments(call: Call) -> Reply:
    repo = find_repo(call)
    issue, pull = find_pull(call, repo)
    comments = [c for r in pull.reviews if r.state != "PENDING" for c in r.comments]
    url = f"{call.state.base_url}/repos/{repo.full_name}/pulls/{issue.number}/comments"
    chunk, headers = paginate(call, comments, url)
    body = [review_comment_json(call.state, repo, issue, c) for c in chunk]
    return Reply(body=body, headers=headers)


# ----- merging ------------------------------------------------------------------------------------
def _merge_texts(call: Call, repo: Repo, issue: Issue, pull: Pull, method: str) -> tuple[str, str]:
    title = call.json_field("commit_title")
    message = call.json_field("commit_message")
    if method == "squash":
        default_title = f"{issue.title} (#{issue.number})"
        infos = pulls.commits(repo, issue, pull)
        default_message = "\n\n".join(f"* {c.message.strip()}" for c in infos)
    else:
        default_title = (
            f"Merge pull request #{issue.number} from {repo.owner.login}/{pull.head_ref}"
        )
        default_message = issue.title
    return (
        title if isinstance(title, str) and title else default_title,
        message if isinstance(message, str) else default_message,
    )


def _merge_body(call: Call) -> None:
    if (call.json_field("merge_method") or "merge") not in MERGE_METHODS:
        raise invalid("PullRequest", "merge_method")


def merge_pull(call: Call) -> Reply:
    repo = find_repo_checked(call, "write", _merge_body)
    issue, pull = find_pull(call, repo)
    sender = actor(call)
    method = call.json_field("merge_method") or "merge"
    if pull.merged or issue.state != "open":
        raise ApiError(405, "Pull Request is not mergeable")
    expected = call.json_field("sha")
    if expected is not None and expected != pull.head_sha:
        raise ApiError(409, "Head branch was modified. Review and try the merge again.")
    if pull.draft:
        raise ApiError(405, "Pull Request is still a draft")
    if not pulls.mergeable(repo, issue, pull):
        raise ApiError(405, "Pull Request is not mergeable")
    refusal = merge_refusal(call.sb.git(repo), repo, pull.base_ref, pull.head_sha)
    if refusal is not None:
        raise ApiError(405, refusal)
    base = pulls.base_sha(repo, issue, pull)
    title, message = _merge_texts(call, repo, issue, pull, method)
    author = issue.user if method == "squash" else sender
    try:
        new = call.sb.git(repo).merge(
            f"refs/heads/{pull.base_ref}",
            pull.head_sha,
            method,
            title=title,
            message=message,
            author=(author.login, author.email),
            expected_base=base,
        )
    except MergeConflict as exc:
        if call.sb.git(repo).resolve(f"refs/heads/{pull.base_ref}") != base:
            raise ApiError(
                409, "Base branch was modified. Review and try the merge again."
            ) from exc
        raise ApiError(405, "Pull Request is not mergeable") from exc
    now = call.state.now()
    pull.base_sha, pull.merged, pull.merged_at, pull.merged_by = base, True, now, sender
    pull.merge_commit_sha = new
    issue.state, issue.closed_at, issue.closed_by, issue.updated_at = "closed", now, sender, now
    events.pull_request(call.sb, "closed", repo, issue, sender)
    pushes.refs_moved(call.sb, repo, [RefUpdate(f"refs/heads/{pull.base_ref}", base, new)], sender)
    return Reply(body={"sha": new, "merged": True, "message": "Pull Request successfully merged"})


def check_merged(call: Call) -> Reply:
    repo = find_repo(call)
    _, pull = find_pull(call, repo)
    if not pull.merged:
        raise not_found()
    return Reply(204)


def routes(sb: Services) -> list[Route]:
    pulls_url = "/repos/{owner}/{repo}/pulls"
    one = pulls_url + "/{number}"
    return [
        rest_route(sb, "GET", pulls_url, list_pulls),
        rest_route(sb, "POST", pulls_url, create_pull),
        rest_route(sb, "GET", one, get_pull),
        rest_route(sb, "PATCH", one, update_pull),
        rest_route(sb, "GET", one + "/files", list_files),
        rest_route(sb, "GET", one + "/commits", list_commits),
        rest_route(sb, "GET", one + "/comments", list_review_comments),
        rest_route(sb, "GET", one + "/reviews", list_reviews),
        rest_route(sb, "POST", one + "/reviews", create_review),
        rest_route(sb, "GET", one + "/reviews/{review_id}", get_review),
        rest_route(sb, "PUT", one + "/reviews/{review_id}/dismissals", dismiss_review),
        rest_route(sb, "GET", one + "/merge", check_merged),
        rest_route(sb, "PUT", one + "/merge", merge_pull),
    ]
