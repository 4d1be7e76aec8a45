"""The GitHub App manifest flow from the command line (see docs/github-app.md).

`manifest` prints the manifest of `app.install.manifest`, or a page that posts it to GitHub.
`convert` calls `POST /app-manifests/{code}/conversions` on OUROBOT_GITHUB_API_URL (no
authentication: the one-time code is the credential, valid for an hour) and writes what it
answers: the private key to a 0600 file, the App id, key path and webhook secret to a 0600 env
file. Secrets are written to those files only, never printed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from app.cli import EXIT_OK
from app.errors import UserError
from app.install.manifest import build_manifest, manifest_form, manifest_json
from app.settings import load_settings

CODE = re.compile(r"^[A-Za-z0-9_-]{1,200}$")


def print_manifest(args: argparse.Namespace) -> int:
    manifest = build_manifest(
        args.url,
        name=args.name,
        redirect_url=args.redirect_url,
        public=args.public,
        actions=args.actions,
    )
    if args.form:
        sys.stdout.write(manifest_form(manifest, github_url=args.github_url, org=args.org))
    else:
        sys.stdout.write(manifest_json(manifest))
    return EXIT_OK


def convert(args: argparse.Namespace) -> int:
    if not CODE.match(args.code):
        raise UserError(f"{args.code!r} is not a manifest code (the `code=` of the redirect)")
    env_file = Path(args.env_file)
    # Checked before the call: the code works once, so nothing may stop the writes after it.
    for path in filter(None, (env_file, args.key_file and Path(args.key_file))):
        if path.exists():
            raise UserError(f"{path} exists: move it away or name another file")
    settings = load_settings()
    created = _conversion(settings.github_api_url, args.code)
    slug = created.slug or "ourobot"
    key_file = Path(args.key_file) if args.key_file else env_file.with_name(f"{slug}.pem")
    if key_file.exists():
        key_file = env_file.with_name(f"{slug}-{created.id}.pem")
    _write_private(key_file, created.pem)
    _write_private(
        env_file,
        f"OUROBOT_APP_ID={created.id}\n"
        f"OUROBOT_PRIVATE_KEY_PATH={key_file.resolve()}\n"
        f"OUROBOT_WEBHOOK_SECRET={created.webhook_secret}\n"
        f"OUROBOT_GITHUB_API_URL={settings.github_api_url}\n",
    )
    print(f"created the App {slug} (id {created.id})")
    print(f"private key: {key_file} (mode 0600)")
    print(f"settings: {env_file} (mode 0600): load it into ourobot's environment")
    print(f"next: install it on a repository at {created.html_url}/installations/new")
    return EXIT_OK


def _conversion(api_url: str, code: str) -> Any:
    """GitHub's answer to the code (githubkit's typed model), or one line saying why not."""
    from githubkit import GitHub
    from githubkit.exception import GitHubException, RequestFailed

    client = GitHub(base_url=api_url, http_cache=False, auto_retry=False, timeout=30)
    try:
        return client.rest.apps.create_from_manifest(code).parsed_data
    except RequestFailed as exc:
        if exc.response.status_code == 404:
            raise UserError(
                "GitHub does not know this code: it is used once and expires after an hour"
            ) from None
        raise UserError(f"GitHub answered {exc.response.status_code} to the conversion") from None
    except GitHubException as exc:
        raise UserError(f"cannot reach {api_url}: {type(exc).__name__}: {exc}") from None


def _write_private(path: Path, text: str) -> None:
    """Written with mode 0600 from the start (never world-readable, even for a moment)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UserError(f"{path} exists: move it away or name another file") from None
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
