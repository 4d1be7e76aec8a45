"""`/ourobot panic` and `/ourobot resume`, handled inline by the receiver before any queue.

A stop cannot wait behind the work it is meant to stop, so the receiver calls this for every
verified delivery before dispatching it. The halt is recorded durably before the webhook is
acknowledged; from then on every task's next side effect is refused (`app.controls.halt`). The
reply to the commenter is posted from a background thread so the acknowledgement stays fast,
with a client that is not subject to the halt (it is the halt's own acknowledgement).

Who may: an `OUROBOT_OPERATORS` login (global halt) or a repository admin (this installation),
by the permission GitHub reports. A lookup that fails refuses the command (fail closed) and
says so. Nothing the repository or a pull request contains can set or lift a halt.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.commands.actors import is_automation, login_of
from app.commands.authz import permission_of
from app.commands.slash import Permission, parse_commands
from app.commands.status_comment import upsert_comment
from app.controls.halt import GLOBAL, HaltRegistry, installation_scope
from app.github_client import GitHubClients, RetryPolicy, bot_login
from app.settings import Settings
from app.store import Store

if TYPE_CHECKING:
    from redis import Redis

    # Only its shape: the receiver's hand-off calls this hook with each committed delivery.
    from app.webhooks.inbox import Delivery

log = logging.getLogger(__name__)

VERBS = ("panic", "resume")
# Inline work sits in front of the webhook's acknowledgement: no retries, short timeouts.
INLINE_RETRY = RetryPolicy(rate_limit_retries=0, server_error_retries=0)
INLINE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Request:
    verb: str
    login: str
    installation_id: int
    repo: str
    number: int
    comment_id: int


@dataclass(frozen=True)
class Outcome:
    verb: str
    done: bool
    reply: str


class PanicHandler:
    """The receiver's inline hook. Never raises: a failure is logged and the delivery goes on."""

    def __init__(self, settings: Settings, store: Store, redis: Redis | None = None) -> None:
        self.settings = settings
        self.halts = HaltRegistry(store, redis)
        self.github = GitHubClients(settings, retry=INLINE_RETRY, timeout_s=INLINE_TIMEOUT_S)
        self._replies: list[threading.Thread] = []

    def __call__(self, delivery: Delivery) -> None:
        try:
            request = parse_request(delivery)
            if request is None:
                return
            outcome = self.decide(request)
            log.warning(
                "%s by %s on %s#%d: %s", request.verb, request.login, request.repo,
                request.number, "done" if outcome.done else "refused",
            )  # fmt: skip
            self._reply_later(request, outcome)
        except Exception:
            log.exception("inline panic handling failed for delivery %s", delivery.delivery_id)

    def decide(self, request: Request) -> Outcome:
        operator = request.login.lower() in {o.lower() for o in self.settings.operators}
        permission = Permission.NONE
        if not operator:
            permission = self._permission(request)
        if not operator and permission < Permission.ADMIN:
            return Outcome(
                request.verb,
                False,
                f"@{request.login}, `/ourobot {request.verb}` needs **admin** permission on this "
                f"repository (or an operator login), and GitHub reports "
                f"**{permission.name.lower()}**. Nothing was done.",
            )
        if request.verb == "panic":
            return self._panic(request, operator)
        return self._resume(request, operator)

    def _panic(self, request: Request, operator: bool) -> Outcome:
        scope = GLOBAL if operator else installation_scope(request.installation_id)
        halt = self.halts.set(scope, reason=f"/ourobot panic on {request.repo}#{request.number}",
                              set_by=request.login)  # fmt: skip
        where = "everywhere (operator halt)" if operator else "on this installation"
        return Outcome(
            "panic",
            True,
            f"🛑 ourobot is **halted** {where} by @{request.login} at "
            f"{halt.set_at:%Y-%m-%d %H:%M:%S} UTC. Work in flight stops before its next side "
            "effect; nothing new starts. `/ourobot resume` (admin or operator) lifts it.",
        )

    def _resume(self, request: Request, operator: bool) -> Outcome:
        scopes = [installation_scope(request.installation_id)]
        if operator:
            scopes.append(GLOBAL)
        lifted = [scope for scope in scopes if self.halts.clear(scope)]
        remaining = self.halts.active(request.installation_id)
        text = "▶️ Halt lifted." if lifted else "There was no halt of yours to lift."
        if remaining is not None:
            text += (
                f" A {remaining.scope} halt set by @{remaining.set_by} is still in force; "
                "only an operator can lift it."
            )
        else:
            text += " ourobot takes new work again."
        return Outcome("resume", bool(lifted), text)

    def _permission(self, request: Request) -> Permission:
        try:
            client = self.github.installation(request.installation_id)
            return permission_of(
                client,
                installation_id=request.installation_id,
                repo=request.repo,
                login=request.login,
            )
        except Exception as exc:
            log.warning("cannot verify %s's permission on %s: %s", request.login, request.repo, exc)
            return Permission.NONE

    def _reply_later(self, request: Request, outcome: Outcome) -> None:
        thread = threading.Thread(
            target=self._reply, args=(request, outcome), name="panic-reply", daemon=True
        )
        self._replies = [t for t in self._replies if t.is_alive()]
        self._replies.append(thread)
        thread.start()

    def _reply(self, request: Request, outcome: Outcome) -> None:
        try:
            client = self.github.installation(request.installation_id)
            upsert_comment(
                client,
                repo=request.repo,
                number=request.number,
                key=f"reply.{request.comment_id}.{request.verb}",
                body=outcome.reply,
                bot_login=bot_login(self.github),
            )
        except Exception as exc:
            log.warning("could not reply to %s on %s: %s", request.verb, request.repo, exc)

    def wait_for_replies(self, timeout_s: float = 10.0) -> None:
        """For shutdown and tests: let pending acknowledgements finish."""
        deadline = datetime.now(UTC).timestamp() + timeout_s
        for thread in list(self._replies):
            thread.join(max(0.0, deadline - datetime.now(UTC).timestamp()))


def parse_request(delivery: Delivery) -> Request | None:
    """The panic/resume command in a delivery, if it is one from a person."""
    if delivery.event != "issue_comment" or delivery.action != "created":
        return None
    # The receiver hands over the payload it parsed; the raw bytes are no place to look for a
    # command (JSON may spell "/" as "\\/" or any letter as "\\u00xx").
    payload: Any = json.loads(delivery.body) if delivery.payload is None else delivery.payload
    if not isinstance(payload, Mapping):
        return None
    comment = _mapping(payload, "comment")
    text = comment.get("body") if comment is not None else None
    # Runs inline for every comment the receiver stores: lower the comment, not the payload.
    if not isinstance(text, str) or "/ourobot" not in text.lower():
        return None
    issue = _mapping(payload, "issue")
    repository, installation = _mapping(payload, "repository"), _mapping(payload, "installation")
    if comment is None or issue is None or repository is None or installation is None:
        return None
    if is_automation(comment.get("user"), comment):
        return None
    verbs = [c.verb for c in parse_commands(text) if c.verb in VERBS]
    login = login_of(comment.get("user"))
    if not verbs or login is None:
        return None
    return Request(
        verb=verbs[0],
        login=login,
        installation_id=int(installation["id"]),
        repo=str(repository["full_name"]),
        number=int(issue["number"]),
        comment_id=int(comment["id"]),
    )


def _mapping(payload: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = payload.get(key)
    return value if isinstance(value, Mapping) else None
