"""GET /status on `ourobot serve`: the token checked, the store read off the event loop, the
page rendered. Added only when OUROBOT_STATUS_TOKEN is set; otherwise the path is a 404 like
any other unknown one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from app.controls.ledger_query import LedgerFilter, search
from app.controls.overview import read_overview
from app.controls.patterns import read_register
from app.settings import Settings
from app.statuspage.access import COOKIE, QUERY, Access, cookie_value, decide
from app.statuspage.page import PageData, render_page, web_url_of
from app.store import Store

if TYPE_CHECKING:
    from redis import Redis

STATUS_PATH = "/status"
RECENT_ROWS = 50
# The page needs nothing from elsewhere and runs no script: say so to the browser.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
REFUSED = "the status page needs its token: Authorization: Bearer <token>, or ?token=<token>\n"


def status_routes(
    settings: Settings,
    store: Store,
    redis: Redis | None = None,
    *,
    queue_names: tuple[str, ...] = (),
) -> list[Route]:
    """The page's route, or none when no token is configured (the page is off)."""
    if settings.status_token is None:
        return []
    token = settings.status_token.get_secret_value()

    def read() -> str:
        data = PageData(
            overview=read_overview(settings, store, redis, queue_names=queue_names),
            entries=list(reversed(search(store, LedgerFilter(limit=RECENT_ROWS)))),
            patterns=sorted(read_register(store), key=lambda p: (-p.count, p.error_class)),
            web_url=web_url_of(settings.github_api_url),
        )
        return render_page(data)

    async def page(request: Request) -> Response:
        access = decide(
            token,
            authorization=request.headers.get("authorization"),
            query=request.query_params.get(QUERY),
            cookie=request.cookies.get(COOKIE),
        )
        if access is Access.DENIED:
            return PlainTextResponse(
                REFUSED, status_code=401, headers={"WWW-Authenticate": "Bearer", **HEADERS}
            )
        if access is Access.FROM_QUERY:
            return _set_cookie_and_drop_the_token(request, token)
        html = await anyio.to_thread.run_sync(read)
        return HTMLResponse(html, headers=HEADERS)

    return [Route(STATUS_PATH, page, methods=["GET"])]


def _set_cookie_and_drop_the_token(request: Request, token: str) -> Response:
    answer = RedirectResponse(STATUS_PATH, status_code=303, headers=HEADERS)
    answer.set_cookie(
        COOKIE,
        cookie_value(token),
        path=STATUS_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return answer


def mount(app: Any, routes: list[Route]) -> None:
    """Add the page's routes to a Starlette/FastAPI app."""
    app.router.routes.extend(routes)
