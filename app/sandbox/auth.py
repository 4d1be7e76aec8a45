"""Who is calling: turns an `Authorization` header into an identity, as GitHub does.

Three kinds of credential: a person's token (`token X` or `Bearer X`, never expires), an App
installation token (expires after the state's TTL), and an App JWT (RS256 signed with the App's
key, `iss` = App id or client id, at most 10 minutes long, GitHub's 60 s clock-skew allowance).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import jwt

from app.sandbox.state import AppRecord, Installation, Repo, SandboxState, User, level_at_least

IdentityKind = Literal["anonymous", "user", "installation", "app"]

CLOCK_SKEW_S = 60
MAX_JWT_LIFETIME_S = 600
BAD_CREDENTIALS = "Bad credentials"
JWT_UNDECODABLE = "A JSON web token could not be decoded"


class AuthError(Exception):
    """A credential was presented and refused (always a 401 on GitHub)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Identity:
    kind: IdentityKind
    user: User | None = None  # the person, or the App's bot user for installation tokens
    installation: Installation | None = None
    app: AppRecord | None = None

    @property
    def key(self) -> str:
        """A stable name for request accounting."""
        if self.kind == "user" and self.user:
            return f"user:{self.user.login}"
        if self.kind == "installation" and self.installation:
            return f"installation:{self.installation.id}"
        if self.kind == "app" and self.app:
            return f"app:{self.app.id}"
        return "anonymous"


ANONYMOUS = Identity("anonymous")


def bearer_token(header: str | None) -> str | None:
    """The credential in `Authorization: token X` / `Bearer X`, or None."""
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() in ("token", "bearer") and value.strip():
        return value.strip()
    return None


def _looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("eyJ")


def resolve(state: SandboxState, header: str | None) -> Identity:
    """The caller's identity; raises AuthError for a refused credential. Hold `state.lock`."""
    if header and bearer_token(header) is None:
        raise AuthError(BAD_CREDENTIALS)
    token = bearer_token(header)
    if token is None:
        return ANONYMOUS
    if _looks_like_jwt(token):
        return Identity("app", app=verify_app_jwt(state, token))
    return token_identity(state, token)


def token_identity(state: SandboxState, token: str) -> Identity:
    record = state.tokens.get(token)
    if record is None:
        raise AuthError(BAD_CREDENTIALS)
    if record.expires_at is not None and record.expires_at <= time.time():
        raise AuthError(BAD_CREDENTIALS)
    if record.kind == "installation" and record.installation:
        inst = record.installation
        return Identity("installation", user=inst.app.bot, installation=inst, app=inst.app)
    return Identity("user", user=record.user)


def verify_app_jwt(state: SandboxState, token: str) -> AppRecord:
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise AuthError(JWT_UNDECODABLE) from exc
    issuer = str(claims.get("iss", ""))
    app = state.app
    if issuer not in (str(app.id), app.client_id):
        raise AuthError(JWT_UNDECODABLE)
    try:
        claims = jwt.decode(
            token,
            app.public_key_pem,
            algorithms=["RS256"],
            leeway=CLOCK_SKEW_S,
            options={"require": ["exp", "iat", "iss"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise AuthError(
            "'Expiration time' claim ('exp') must be a numeric value representing the future "
            "time at which the assertion expires"
        ) from exc
    except jwt.ImmatureSignatureError as exc:
        raise AuthError(
            "'Issued at' claim ('iat') must be an Integer representing the time "
            "that the assertion was issued"
        ) from exc
    except jwt.PyJWTError as exc:
        raise AuthError(JWT_UNDECODABLE) from exc
    if int(claims["exp"]) - int(claims["iat"]) > MAX_JWT_LIFETIME_S:
        raise AuthError("'Expiration time' claim ('exp') is too far in the future")
    return app


def repo_level(state: SandboxState, identity: Identity, repo: Repo) -> str:
    """The caller's effective permission level on a repository.

    An installation token acts with write on every repo of its installation (the App asks for
    contents, issues, pulls, checks and statuses write); anonymous callers and outsiders can read
    public repos only.
    """
    if identity.kind == "installation" and identity.installation:
        return "write" if repo.id in identity.installation.repo_ids else "none"
    if identity.kind == "user" and identity.user:
        level = state.permission(repo, identity.user)
        if level == "none" and not repo.private:
            return "read"
        return level
    return "none" if repo.private else "read"


def can(state: SandboxState, identity: Identity, repo: Repo, minimum: str) -> bool:
    return level_at_least(repo_level(state, identity, repo), minimum)
