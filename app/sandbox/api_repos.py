"""REST routes about a repository and its git data: the repository, a collaborator's permission,
contents at a ref, a commit (with its files, or as the git database has it), and refs (get,
delete).
"""

from __future__ import annotations

from starlette.routing import Route

from app.sandbox import auth, pushes, versions
from app.sandbox.auth import Identity
from app.sandbox.gitops import ZERO_SHA, GitError, RefUpdate, UnknownRevision
from app.sandbox.routing import (
    ApiError,
    Call,
    Reply,
    Services,
    actor,
    find_repo,
    not_found,
    rest_route,
)
from app.sandbox.serializers import (
    ROLE_TO_LEGACY,
    commit_json,
    content_entry_json,
    git_commit_json,
    git_ref_json,
    repo_json,
    repo_permissions_json,
    user_json,
)
from app.sandbox.state import Repo

RAW_MEDIA = "application/vnd.github.raw"


def get_repo(call: Call) -> Reply:
    repo = find_repo(call)
    level = auth.repo_level(call.state, call.identity, repo)
    return Reply(body=repo_json(call.state, repo, level=level))


def collaborator_permission(call: Call) -> Reply:
    repo = find_repo(call)
    login = call.params["username"]
    user = call.state.user(login)
    if user is None:
        raise ApiError(404, f"{login} is not a user")
    level = auth.repo_level(call.state, Identity("user", user=user), repo)
    collaborator = {
        **user_json(call.state, user),
        "permissions": repo_permissions_json(level),
        "role_name": level,
    }
    body = {
        "permission": ROLE_TO_LEGACY[level],
        "role_name": level,
        "user": collaborator,
    }
    return Reply(body=body)


def _resolve_ref(call: Call, repo: Repo) -> tuple[str, str]:
    ref = call.query.get("ref") or repo.default_branch
    sha = call.sb.git(repo).resolve(ref)
    if sha is None:
        raise ApiError(404, f"No commit found for the ref {ref}")
    return ref, sha


def get_contents(call: Call) -> Reply:
    repo = find_repo(call)
    git = call.sb.git(repo)
    ref, sha = _resolve_ref(call, repo)
    path = str(call.params.get("path", "")).strip("/")
    entry = git.entry_at(sha, path)
    if entry is None:
        raise not_found()
    if entry.type == "dir":
        listing = git.list_tree(sha, path) or []
        body = [content_entry_json(call.state, repo, ref, e) for e in listing]
        if call.api_version == versions.V2022:
            # 2022-11-28 lists a submodule as a "file", for backwards compatibility; 2026-03-10
            # says "submodule" (changeset return_submodule_type_for_submodules_in_directory_lists).
            for item in body:
                if item["type"] == "submodule":
                    item["type"] = "file"
        return Reply(body=body)
    content = git.read_blob(sha, path) if entry.type in ("file", "symlink") else None
    if call.accepts(RAW_MEDIA) and entry.type == "file" and content is not None:
        return Reply(raw=content, media_type=RAW_MEDIA)
    return Reply(body=content_entry_json(call.state, repo, ref, entry, content or b""))


def get_commit(call: Call) -> Reply:
    repo = find_repo(call)
    git = call.sb.git(repo)
    ref = call.params["ref"]
    sha = git.resolve(ref)
    if sha is None:
        raise ApiError(422, f"No commit found for SHA: {ref}")
    info = git.commit_info(sha)
    try:
        changes = git.compare(info.parents[0], sha) if info.parents else []
    except GitError:
        changes = []
    return Reply(body=commit_json(call.state, repo, info, changes=changes))


def get_git_commit(call: Call) -> Reply:
    repo = find_repo(call)
    sha = call.params["sha"]
    git = call.sb.git(repo)
    # The git database is addressed by full object ids only, not by branch names.
    if len(sha) != 40 or git.resolve(sha) != sha:
        raise not_found()
    return Reply(body=git_commit_json(call.state, repo, git.commit_info(sha)))


def get_ref(call: Call) -> Reply:
    repo = find_repo(call)
    ref = "refs/" + call.params["ref"]
    sha = call.sb.git(repo).refs().get(ref)
    if sha is None:
        raise not_found()
    return Reply(body=git_ref_json(call.state, repo, ref, sha))


def delete_ref(call: Call) -> Reply:
    repo = find_repo(call, "write")
    ref = "refs/" + call.params["ref"]
    git = call.sb.git(repo)
    old = git.refs().get(ref)
    if old is None:
        raise ApiError(422, "Reference does not exist")
    try:
        git.delete_ref(ref)
    except UnknownRevision as exc:
        raise ApiError(422, "Reference does not exist") from exc
    pushes.refs_moved(call.sb, repo, [RefUpdate(ref, old, ZERO_SHA)], actor(call))
    return Reply(204)


def routes(sb: Services) -> list[Route]:
    base = "/repos/{owner}/{repo}"
    return [
        rest_route(sb, "GET", base, get_repo),
        rest_route(
            sb, "GET", base + "/collaborators/{username}/permission", collaborator_permission
        ),
        rest_route(sb, "GET", base + "/contents", get_contents),
        rest_route(sb, "GET", base + "/contents/{path:path}", get_contents),
        rest_route(sb, "GET", base + "/commits/{ref:path}", get_commit),
        rest_route(sb, "GET", base + "/git/commits/{sha}", get_git_commit),
        rest_route(sb, "GET", base + "/git/ref/{ref:path}", get_ref),
        rest_route(sb, "DELETE", base + "/git/refs/{ref:path}", delete_ref),
    ]
