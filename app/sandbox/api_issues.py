"""REST routes for issues and what hangs off them: labels, comments, reactions. Pull requests are
issues too (one number sequence per repo), so these routes serve them as well, and their webhooks
become `pull_request.*` where GitHub sends those.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from starlette.routing import Route

from app.sandbox import auth, events, pulls
from app.sandbox.gitops import GitError
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
    REACTION_KEYS,
    comment_json,
    issue_json,
    label_json,
    reaction_json,
)
from app.sandbox.state import Comment, Issue, Label, Reaction, Repo, User, iso

DEFAULT_LABEL_COLOR = "ededed"


def find_issue(call: Call, repo: Repo) -> Issue:
    try:
        issue = repo.issues.get(int(call.params["number"]))
    except ValueError:
        issue = None
    if issue is None:
        raise not_found()
    return issue


def _string(call: Call, name: str, *, required: bool = False) -> str | None:
    value = call.json_field(name)
    if value is None:
        if required:
            raise invalid("Issue", name, "missing_field")
        return None
    if not isinstance(value, str):
        raise invalid("Issue", name, "invalid")
    return value


# ----- labels -------------------------------------------------------------------------------------
def _label_names(value: Any) -> list[str]:
    """Labels given as names or as `{"name": ...}` objects, as GitHub accepts both."""
    if isinstance(value, dict):
        value = value.get("labels")
    if not isinstance(value, list):
        raise invalid("Label", "labels", "invalid")
    names = []
    for item in value:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name.strip():
            raise invalid("Label", "name", "invalid")
        names.append(name.strip())
    return names


def ensure_label(call: Call, repo: Repo, name: str) -> Label:
    label = repo.labels.get(name.lower())
    if label is None:
        label = Label(call.state.next_id(), name, DEFAULT_LABEL_COLOR, None)
        repo.labels[name.lower()] = label
    return label


def add_labels(call: Call, repo: Repo, issue: Issue, names: list[str], sender: User) -> None:
    present = {label.name.lower() for label in issue.labels}
    for name in names:
        if name.lower() in present:
            continue
        label = ensure_label(call, repo, name)
        issue.labels.append(label)
        present.add(name.lower())
        issue.updated_at = call.state.now()
        events.labeled(call.sb, "labeled", repo, issue, label, sender)


def _label_body(call: Call) -> None:
    name = call.json_field("name")
    if not isinstance(name, str) or not name.strip():
        raise invalid("Label", "name", "missing_field")


def create_label(call: Call) -> Reply:
    repo = find_repo_checked(call, "write", _label_body)
    name = str(call.json_field("name"))
    if name.lower() in repo.labels:
        raise invalid("Label", "name", "already_exists")
    color = str(call.json_field("color") or DEFAULT_LABEL_COLOR).lstrip("#")
    label = Label(call.state.next_id(), name, color, call.json_field("description"))
    repo.labels[name.lower()] = label
    return Reply(201, label_json(call.state, repo, label))


def list_labels(call: Call) -> Reply:
    repo = find_repo(call)
    url = f"{call.state.base_url}/repos/{repo.full_name}/labels"
    chunk, headers = paginate(call, list(repo.labels.values()), url)
    return Reply(body=[label_json(call.state, repo, label) for label in chunk], headers=headers)


def get_label(call: Call) -> Reply:
    repo = find_repo(call)
    label = repo.labels.get(call.params["name"].lower())
    if label is None:
        raise not_found()
    return Reply(body=label_json(call.state, repo, label))


def add_issue_labels(call: Call) -> Reply:
    repo = find_repo(call, "triage")
    issue = find_issue(call, repo)
    add_labels(call, repo, issue, _label_names(call.body), actor(call))
    return Reply(body=[label_json(call.state, repo, label) for label in issue.labels])


def remove_issue_label(call: Call) -> Reply:
    repo = find_repo(call, "triage")
    issue = find_issue(call, repo)
    wanted = call.params["name"].lower()
    label = next((lb for lb in issue.labels if lb.name.lower() == wanted), None)
    if label is None:
        raise ApiError(404, "Label does not exist")
    issue.labels.remove(label)
    issue.updated_at = call.state.now()
    events.labeled(call.sb, "unlabeled", repo, issue, label, actor(call))
    return Reply(body=[label_json(call.state, repo, lb) for lb in issue.labels])


# ----- issues -------------------------------------------------------------------------------------
def list_issues(call: Call) -> Reply:
    repo = find_repo(call)
    wanted_state = call.query.get("state", "open")
    wanted_labels = {n.strip().lower() for n in call.query.get("labels", "").split(",") if n}
    creator = call.query.get("creator", "").lower()
    since = _timestamp(call.query.get("since"))
    found = [
        issue
        for issue in repo.issues.values()
        if wanted_state in ("all", issue.state)
        and wanted_labels <= {label.name.lower() for label in issue.labels}
        and creator in ("", issue.user.login.lower())
        and (since is None or issue.updated_at >= since)
    ]
    key = "updated_at" if call.query.get("sort") == "updated" else "created_at"
    found.sort(
        key=lambda i: (getattr(i, key), i.number),
        reverse=call.query.get("direction", "desc") == "desc",
    )
    url = f"{call.state.base_url}/repos/{repo.full_name}/issues"
    chunk, headers = paginate(call, found, url)
    return Reply(body=[issue_json(call.state, repo, i) for i in chunk], headers=headers)


def _timestamp(value: str | None) -> float | None:
    """An ISO 8601 `since`, as GitHub documents it (`YYYY-MM-DDTHH:MM:SSZ`, or an offset for
    the `Z`); 422 when unreadable, a space for the `T` included (`str(datetime)`'s form)."""
    if not value:
        return None
    if value[10:11] not in ("T", "t"):
        raise invalid("Issue", "since", "invalid")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise invalid("Issue", "since", "invalid") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # GitHub compares at second precision.
    return float(int(moment.timestamp()))


def create_issue(call: Call) -> Reply:
    repo = find_repo(call)
    sender = actor(call)
    title = _string(call, "title", required=True)
    assert title is not None
    now = call.state.now()
    issue = Issue(
        id=call.state.next_id(),
        number=repo.next_number,
        user=sender,
        title=title,
        body=_string(call, "body"),
        created_at=now,
        updated_at=now,
    )
    repo.next_number += 1
    repo.issues[issue.number] = issue
    events.issues(call.sb, "opened", repo, issue, sender)
    labels = call.json_field("labels")
    # Labels set by someone without triage access are silently dropped, as on GitHub.
    if labels and auth.can(call.state, call.identity, repo, "triage"):
        add_labels(call, repo, issue, _label_names(labels), sender)
    return Reply(201, issue_json(call.state, repo, issue))


def get_issue(call: Call) -> Reply:
    repo = find_repo(call)
    return Reply(body=issue_json(call.state, repo, find_issue(call, repo)))


def set_state(call: Call, repo: Repo, issue: Issue, state: str, sender: User) -> None:
    """Close or reopen an issue or pull request, with its webhook."""
    now = call.state.now()
    if state == issue.state:
        return
    if state == "closed":
        if issue.pull is not None:  # freeze the base the closed PR is compared with
            issue.pull.base_sha = pulls.base_sha(repo, issue, issue.pull)
        issue.state, issue.closed_at, issue.closed_by = "closed", now, sender
        issue.state_reason = _string(call, "state_reason") or "completed"
    else:
        if issue.pull is not None:
            head = call.sb.git(repo).resolve(f"refs/heads/{issue.pull.head_ref}")
            if head is None:
                raise invalid("PullRequest", "state", "invalid")
            issue.pull.head_sha = head  # pushes made while it was closed count now
            with contextlib.suppress(GitError):
                call.sb.git(repo).update_ref(f"refs/pull/{issue.number}/head", head)
        issue.state, issue.closed_at, issue.closed_by = "open", None, None
        issue.state_reason = "reopened"
    issue.updated_at = now
    events.issues(call.sb, "closed" if state == "closed" else "reopened", repo, issue, sender)
    if state == "open" and issue.pull is not None:
        call.sb.ci.trigger(repo, issue.pull.head_sha)


def edit_text(call: Call, repo: Repo, issue: Issue, sender: User) -> None:
    changes: dict[str, Any] = {}
    for name in ("title", "body"):
        value = _string(call, name)
        if value is not None and value != getattr(issue, name):
            changes[name] = {"from": getattr(issue, name)}
            setattr(issue, name, value)
    if changes:
        issue.updated_at = call.state.now()
        events.issues(call.sb, "edited", repo, issue, sender, changes=changes)


def update_issue(call: Call) -> Reply:
    repo = find_repo(call)
    issue = find_issue(call, repo)
    sender = actor(call)
    is_author = issue.user.id == sender.id
    if not (is_author or auth.can(call.state, call.identity, repo, "triage")):
        raise ApiError(
            403,
            "Resource not accessible by integration"
            if call.identity.kind == "installation"
            else "Must have push access",
        )
    edit_text(call, repo, issue, sender)
    state = _string(call, "state")
    if state is not None:
        if state not in ("open", "closed"):
            raise invalid("Issue", "state", "invalid")
        set_state(call, repo, issue, state, sender)
    labels = call.json_field("labels")
    if labels is not None and auth.can(call.state, call.identity, repo, "triage"):
        names = _label_names(labels)
        for label in [
            lb for lb in issue.labels if lb.name.lower() not in {n.lower() for n in names}
        ]:
            issue.labels.remove(label)
            events.labeled(call.sb, "unlabeled", repo, issue, label, sender)
        add_labels(call, repo, issue, names, sender)
    return Reply(body=issue_json(call.state, repo, issue))


# ----- comments -----------------------------------------------------------------------------------
def find_comment(call: Call, repo: Repo) -> Comment:
    try:
        comment = repo.comments.get(int(call.params["comment_id"]))
    except ValueError:
        comment = None
    if comment is None:
        raise not_found()
    return comment


def create_comment(call: Call) -> Reply:
    repo = find_repo(call)
    issue = find_issue(call, repo)
    sender = actor(call)
    body = call.json_field("body")
    if not isinstance(body, str) or not body:
        raise invalid("IssueComment", "body", "missing_field")
    now = call.state.now()
    comment = Comment(
        call.state.next_id(),
        issue.number,
        sender,
        body,
        now,
        now,
        app=call.identity.app if call.identity.kind == "installation" else None,
    )
    repo.comments[comment.id] = comment
    issue.comment_ids.append(comment.id)
    issue.updated_at = now
    events.issue_comment(call.sb, "created", repo, issue, comment, sender)
    return Reply(201, comment_json(call.state, repo, comment))


def list_comments(call: Call) -> Reply:
    repo = find_repo(call)
    issue = find_issue(call, repo)
    comments = [repo.comments[c] for c in issue.comment_ids]
    since = call.query.get("since")
    if since:
        comments = [c for c in comments if iso(c.updated_at) >= since]
    url = f"{call.state.base_url}/repos/{repo.full_name}/issues/{issue.number}/comments"
    chunk, headers = paginate(call, comments, url)
    return Reply(body=[comment_json(call.state, repo, c) for c in chunk], headers=headers)


def get_comment(call: Call) -> Reply:
    repo = find_repo(call)
    return Reply(body=comment_json(call.state, repo, find_comment(call, repo)))


def _may_change_comment(call: Call, repo: Repo, comment: Comment) -> User:
    sender = actor(call)
    if comment.user.id != sender.id and not auth.can(call.state, call.identity, repo, "write"):
        raise ApiError(
            403,
            "Resource not accessible by integration"
            if call.identity.kind == "installation"
            else "Must have push access",
        )
    return sender


def edit_comment(call: Call) -> Reply:
    repo = find_repo(call)
    comment = find_comment(call, repo)
    sender = _may_change_comment(call, repo, comment)
    body = call.json_field("body")
    if not isinstance(body, str) or not body:
        raise invalid("IssueComment", "body", "missing_field")
    issue = repo.issues[comment.issue_number]
    if body != comment.body:
        changes = {"body": {"from": comment.body}}
        comment.body, comment.updated_at = body, call.state.now()
        events.issue_comment(call.sb, "edited", repo, issue, comment, sender, changes=changes)
    return Reply(body=comment_json(call.state, repo, comment))


def delete_comment(call: Call) -> Reply:
    repo = find_repo(call)
    comment = find_comment(call, repo)
    sender = _may_change_comment(call, repo, comment)
    issue = repo.issues[comment.issue_number]
    del repo.comments[comment.id]
    issue.comment_ids.remove(comment.id)
    events.issue_comment(call.sb, "deleted", repo, issue, comment, sender)
    return Reply(204)


# ----- reactions ----------------------------------------------------------------------------------
def _react(call: Call, reactions: list[Reaction]) -> Reply:
    content = call.json_field("content")
    if content not in REACTION_KEYS:
        raise invalid("Reaction", "content", "invalid")
    sender = actor(call)
    existing = next((r for r in reactions if r.user.id == sender.id and r.content == content), None)
    if existing is not None:
        return Reply(200, reaction_json(call.state, existing))
    reaction = Reaction(call.state.next_id(), sender, content, call.state.now())
    reactions.append(reaction)
    return Reply(201, reaction_json(call.state, reaction))


def _list_reactions(call: Call, reactions: list[Reaction], url: str) -> Reply:
    content = call.query.get("content")
    shown = [r for r in reactions if content in (None, r.content)]
    chunk, headers = paginate(call, shown, url)
    return Reply(body=[reaction_json(call.state, r) for r in chunk], headers=headers)


def react_issue(call: Call) -> Reply:
    repo = find_repo(call)
    return _react(call, find_issue(call, repo).reactions)


def list_issue_reactions(call: Call) -> Reply:
    repo = find_repo(call)
    issue = find_issue(call, repo)
    url = f"{call.state.base_url}/repos/{repo.full_name}/issues/{issue.number}/reactions"
    return _list_reactions(call, issue.reactions, url)


def react_comment(call: Call) -> Reply:
    repo = find_repo(call)
    return _react(call, find_comment(call, repo).reactions)


def list_comment_reactions(call: Call) -> Reply:
    repo = find_repo(call)
    comment = find_comment(call, repo)
    url = f"{call.state.base_url}/repos/{repo.full_name}/issues/comments/{comment.id}/reactions"
    return _list_reactions(call, comment.reactions, url)


def routes(sb: Services) -> list[Route]:
    base = "/repos/{owner}/{repo}"
    issue = base + "/issues/{number}"
    comment = base + "/issues/comments/{comment_id}"
    return [
        rest_route(sb, "GET", base + "/labels", list_labels),
        rest_route(sb, "POST", base + "/labels", create_label),
        rest_route(sb, "GET", base + "/labels/{name}", get_label),
        rest_route(sb, "GET", base + "/issues", list_issues),
        rest_route(sb, "POST", base + "/issues", create_issue),
        rest_route(sb, "GET", comment, get_comment),
        rest_route(sb, "PATCH", comment, edit_comment),
        rest_route(sb, "DELETE", comment, delete_comment),
        rest_route(sb, "GET", comment + "/reactions", list_comment_reactions),
        rest_route(sb, "POST", comment + "/reactions", react_comment),
        rest_route(sb, "GET", issue, get_issue),
        rest_route(sb, "PATCH", issue, update_issue),
        rest_route(sb, "POST", issue + "/labels", add_issue_labels),
        rest_route(sb, "DELETE", issue + "/labels/{name}", remove_issue_label),
        rest_route(sb, "GET", issue + "/comments", list_comments),
        rest_route(sb, "POST", issue + "/comments", create_comment),
        rest_route(sb, "GET", issue + "/reactions", list_issue_reactions),
        rest_route(sb, "POST", issue + "/reactions", react_issue),
    ]
