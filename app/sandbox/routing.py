"""How a REST request becomes a handler call, and a handler's answer a GitHub-shaped response.

Every REST route goes through `rest_route`: it resolves the caller, counts the request, applies
injected faults and the primary rate limit, parses the JSON body, runs the (synchronous) handler in
a worker thread under the state lock, and stamps GitHub's headers (`x-ratelimit-*`,
`x-github-request-id`, media type) on whatever comes back. Errors are `ApiError`s with GitHub's
JSON error shape.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.sandbox import auth, permissions, versions
from app.sandbox.auth import AuthError, Identity
from app.sandbox.faults import FaultBook
from app.sandbox.gitops import BareRepo
from app.sandbox.state import Repo, SandboxState, User
from app.sandbox.webhooks import WebhookDispatcher

if TYPE_CHECKING:
    from app.sandbox.ci import CiRunner
    from app.sandbox.runner import WorkflowRunner

DOCS = "https://docs.github.com/rest"
ANONYMOUS_LIMIT = 60
MAX_PER_PAGE = 100


class ApiError(Exception):
    """An error answer in GitHub's shape: message, documentation_url, status (+ errors)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        headers: dict[str, str] | None = None,
        docs: str = DOCS,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = headers or {}
        self.docs = docs

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            out["errors"] = self.errors
        out["documentation_url"] = self.docs
        out["status"] = str(self.status)
        return out


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def invalid(resource: str, field_name: str, code: str = "invalid", **extra: Any) -> ApiError:
    """GitHub's 422 "Validation Failed" with one error object."""
    error = {"resource": resource, "field": field_name, "code": code, **extra}
    return ApiError(422, "Validation Failed", errors=[error])


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # a non-JSON body (diffs, raw file contents)
    media_type: str = "application/json; charset=utf-8"


@dataclass
class Services:
    """The long-lived parts a handler may use; one per server."""

    state: SandboxState
    hooks: WebhookDispatcher
    faults: FaultBook
    ci: CiRunner
    runner: WorkflowRunner  # the Actions runner stand-in: dispatched workflow runs
    # App-manifest codes waiting for their conversion (`app.sandbox.manifests`).
    conversions: dict[str, Any] = field(default_factory=dict)

    def git(self, repo: Repo) -> BareRepo:
        return BareRepo(repo.path)


@dataclass
class Call:
    """One REST request as a handler sees it."""

    sb: Services
    identity: Identity
    params: dict[str, Any]
    query: QueryParams
    headers: dict[str, str]
    body: Any
    api_version: str = versions.DEFAULT  # what `X-GitHub-Api-Version` asked for

    @property
    def state(self) -> SandboxState:
        return self.sb.state

    def json_field(self, name: str, default: Any = None) -> Any:
        if isinstance(self.body, dict):
            return self.body.get(name, default)
        return default

    def accepts(self, *media: str) -> bool:
        accept = self.headers.get("accept", "")
        return any(m in accept for m in media)


Handler = Callable[[Call], Reply]


# ----- pagination ---------------------------------------------------------------------------------
def page_args(call: Call, *, max_per_page: int = MAX_PER_PAGE) -> tuple[int, int]:
    try:
        per_page = int(call.query.get("per_page", "30"))
        page = int(call.query.get("page", "1"))
    except ValueError as exc:
        raise invalid("Pagination", "page") from exc
    return max(1, page), min(max(1, per_page), max_per_page)


def paginate(
    call: Call, items: Sequence[Any], url: str, *, max_per_page: int = MAX_PER_PAGE
) -> tuple[list[Any], dict[str, str]]:
    """The requested page of `items` and a `Link` header like GitHub's."""
    page, per_page = page_args(call, max_per_page=max_per_page)
    start = (page - 1) * per_page
    chunk = list(items[start : start + per_page])
    last = max(1, -(-len(items) // per_page))
    links = []
    if page < last:
        links.append(f'<{url}?per_page={per_page}&page={page + 1}>; rel="next"')
        links.append(f'<{url}?per_page={per_page}&page={last}>; rel="last"')
    if page > 1:
        links.append(f'<{url}?per_page={per_page}&page=1>; rel="first"')
        links.append(f'<{url}?per_page={per_page}&page={page - 1}>; rel="prev"')
    return chunk, ({"link": ", ".join(links)} if links else {})


# ----- permission helpers -------------------------------------------------------------------------
def find_repo(call: Call, minimum: str = "read") -> Repo:
    """The repo named in the path, if the caller may act on it at `minimum` level.

    A repo the caller cannot read is a 404 (GitHub hides private repos); one they can read but
    not write to is a 403; an anonymous caller asked to write gets 401.
    """
    repo = call.state.repo(call.params["owner"], call.params["repo"])
    if repo is None:
        raise not_found()
    require_level(call, repo, minimum)
    return repo


def find_repo_checked(call: Call, minimum: str, check_body: Callable[[Call], None]) -> Repo:
    """`find_repo` for a write whose body GitHub validates first: a caller who cannot see the
    repo gets 404 and an anonymous one 401, then an invalid body 422, and only then a caller
    below `minimum` 403 (GitHub checks a request against its schema before its permission)."""
    repo = find_repo(call)
    if call.identity.kind == "anonymous":
        raise ApiError(401, "Requires authentication")
    check_body(call)
    require_level(call, repo, minimum)
    return repo


def require_level(call: Call, repo: Repo, minimum: str) -> None:
    if call.identity.kind == "app":
        raise ApiError(403, "Resource not accessible by integration")
    if not auth.can(call.state, call.identity, repo, "read"):
        raise not_found()
    if auth.can(call.state, call.identity, repo, minimum):
        return
    if call.identity.kind == "anonymous":
        raise ApiError(401, "Requires authentication")
    if call.identity.kind == "installation":
        raise ApiError(403, "Resource not accessible by integration")
    raise ApiError(403, "Resource not accessible by personal access token")


def actor(call: Call) -> User:
    """The user an authenticated call acts as (the App's bot user for installation tokens)."""
    if call.identity.user is None:
        raise ApiError(401, "Requires authentication")
    return call.identity.user


# ----- the wrapper --------------------------------------------------------------------------------
def _limit(state: SandboxState, identity: Identity) -> int:
    return ANONYMOUS_LIMIT if identity.kind == "anonymous" else state.rate_limit


def _json_response(
    status: int, body: Any, headers: dict[str, str], media_type: str | None = None
) -> Response:
    if status == 204 or body is None:
        return Response(status_code=status, headers=headers)
    return JSONResponse(body, status_code=status, headers=headers, media_type=media_type)


def _render(reply: Reply, headers: dict[str, str]) -> Response:
    merged = {**headers, **reply.headers}
    if reply.raw is not None:
        return Response(
            reply.raw, status_code=reply.status, headers=merged, media_type=reply.media_type
        )
    return _json_response(reply.status, reply.body, merged, reply.media_type)


def _parse_body(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ApiError(400, "Problems parsing JSON") from exc


class _Outcome:
    """What the locked part of a request decided: an early answer or a call to run."""

    def __init__(
        self,
        *,
        reply: Reply | None = None,
        call: Call | None = None,
        delay_s: float = 0.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.reply = reply
        self.call = call
        self.delay_s = delay_s
        self.headers = headers or {}


def rest_route(
    sb: Services, method: str, template: str, handler: Handler, *, implemented: bool = True
) -> Route:
    """A Starlette route serving `handler` the way GitHub's REST API behaves.

    Route names are `rest:METHOD /template` for implemented endpoints (tests enumerate them).
    """
    route_name = re.sub(r"\{(\w+):\w+\}", r"{\1}", template)  # accounting key, no converters

    def prepare(request: Request, raw: bytes) -> _Outcome:
        header = request.headers.get("authorization")
        token = auth.bearer_token(header)
        method = request.method
        with sb.state.lock:
            try:
                identity = auth.resolve(sb.state, header)
                error: ApiError | None = None
            except AuthError as exc:
                identity, error = auth.ANONYMOUS, ApiError(401, exc.message)
            key = identity.key if error is None else "bad-credentials"
            sb.faults.count(method, route_name, key)
            window = sb.faults.spend(key)
            limit = _limit(sb.state, identity)
            headers = {
                **FaultBook.rate_headers(window, limit),
                "x-github-request-id": uuid.uuid4().hex[:20].upper(),
                "x-github-media-type": "github.v3; format=json",
            }
        try:
            # GitHub refuses an unsupported version before it looks at anything else.
            version = versions.requested(request.headers.get(versions.HEADER))
        except versions.UnsupportedVersion as exc:
            refusal = ApiError(400, str(exc), docs=versions.DOCS)
            return _Outcome(reply=Reply(400, refusal.body()), headers=headers)
        headers["x-github-api-version-selected"] = version
        with sb.state.lock:
            fault = sb.faults.pick(method, request.url.path, token)
        if fault is not None:
            fr = FaultBook.reply(fault, key, limit)
            if fr.status:
                reply = Reply(fr.status, fr.body, fr.headers)
                return _Outcome(reply=reply, delay_s=fr.delay_s, headers=headers)
            delay = fr.delay_s
        else:
            delay = 0.0
        if error is None and identity.kind == "installation" and identity.installation:
            inst = identity.installation
            granted = inst.app.permissions if inst.permissions is None else inst.permissions
            lacking = permissions.lacking(granted, method, route_name)
            if lacking:
                error = ApiError(
                    403,
                    "Resource not accessible by integration",
                    headers={"x-accepted-github-permissions": lacking},
                )
        if error is None and window.used > limit:
            error = ApiError(
                403,
                f"API rate limit exceeded for {key}.",
                docs="https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
            )
        try:
            if error is not None:
                raise error
            body = _parse_body(raw)
        except ApiError as exc:
            return _Outcome(reply=Reply(exc.status, exc.body(), exc.headers), headers=headers)
        call = Call(
            sb=sb,
            identity=identity,
            params=dict(request.path_params),
            query=request.query_params,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
            api_version=version,
        )
        return _Outcome(call=call, delay_s=delay, headers=headers)

    def handle(call: Call) -> Reply:
        with sb.state.lock:
            try:
                reply = handler(call)
            except ApiError as exc:
                return Reply(exc.status, exc.body(), exc.headers)
        reply.body = versions.shape(reply.body, call.api_version)
        return reply

    async def endpoint(request: Request) -> Response:
        raw = await request.body()
        outcome = await run_in_threadpool(prepare, request, raw)
        if outcome.delay_s:
            await asyncio.sleep(outcome.delay_s)
        reply = outcome.reply
        if reply is None and outcome.call is not None:
            reply = await run_in_threadpool(handle, outcome.call)
        assert reply is not None
        with sb.state.lock:
            sb.faults.record(
                {
                    "t": time.time(),
                    "method": request.method,
                    "path": request.url.path,
                    "route": route_name,
                    "identity": outcome.call.identity.key if outcome.call else None,
                    "status": reply.status,
                }
            )
        return _render(reply, outcome.headers)

    name = f"rest:{method} {route_name}" if implemented else f"fallback:{method}"
    return Route(template, endpoint, methods=[method], name=name)


def _not_implemented(call: Call) -> Reply:
    raise not_found()


def fallback_routes(sb: Services, methods: Sequence[str]) -> list[Route]:
    """Anything the sandbox does not implement: GitHub's 404 body, with the usual headers."""
    return [
        rest_route(sb, method, "/{path:path}", _not_implemented, implemented=False)
        for method in methods
    ]
