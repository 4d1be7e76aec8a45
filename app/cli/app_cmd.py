"""`ourobot app manifest` and `ourobot app convert`: the GitHub App manifest flow: arguments only.

The implementation is `app.cli.app`, imported when the command runs.
"""

from __future__ import annotations

from typing import Any

from app.cli.deferred import deferred


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("app", help="create the GitHub App from its manifest")
    actions = parser.add_subparsers(dest="app_command", metavar="ACTION")
    manifest = actions.add_parser(
        "manifest", help="print the App manifest (or, with --form, a page that creates the App)"
    )
    manifest.add_argument(
        "--url",
        required=True,
        help="where this deployment answers, e.g. https://ourobot.example.com",
    )
    manifest.add_argument("--name", default="ourobot", help="the App's name (unique on GitHub)")
    manifest.add_argument(
        "--redirect-url", help="where GitHub sends you back with the code (default: --url)"
    )
    manifest.add_argument("--public", action="store_true", help="let other accounts install it")
    manifest.add_argument(
        "--actions",
        action="store_true",
        help="also ask for the actions permission, for repositories whose cycles run on their "
        "own Actions runners (implementer.runs_on: actions)",
    )
    manifest.add_argument(
        "--form", action="store_true", help="print an HTML page whose button posts the manifest"
    )
    manifest.add_argument("--org", help="with --form: create the App in this organization")
    manifest.add_argument(
        "--github-url",
        default="https://github.com",
        help="with --form: GitHub's web address (GitHub Enterprise Server: your host)",
    )
    manifest.set_defaults(handler=deferred("app.cli.app", "print_manifest"))

    convert = actions.add_parser(
        "convert", help="exchange the code GitHub redirected you with for the App's credentials"
    )
    convert.add_argument("code", help="the `code` parameter of the redirect")
    convert.add_argument(
        "--env-file",
        default="ourobot.env",
        help="where to write OUROBOT_APP_ID, OUROBOT_PRIVATE_KEY_PATH and OUROBOT_WEBHOOK_SECRET "
        "(mode 0600; default ./ourobot.env)",
    )
    convert.add_argument(
        "--key-file",
        help="where to write the private key (mode 0600; default <slug>.pem beside it)",
    )
    convert.set_defaults(handler=deferred("app.cli.app", "convert"))
