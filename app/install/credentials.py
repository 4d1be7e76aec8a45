"""The App's credentials, checked before a process starts (and by `ourobot doctor`): an id and a
private key that loads, or neither; never one without the other."""

from __future__ import annotations

from app.errors import ConfigError
from app.settings import Settings

KEY_HELP = "the App's private key: its settings page, Private keys, Generate a private key"


def check_app_credentials(settings: Settings) -> bool:
    """True when the App's id and a loadable private key are set, False when neither is;
    `ConfigError` for one without the other, an unreadable file or a key that does not load."""
    has_key = settings.private_key is not None or settings.private_key_path is not None
    if settings.app_id is None and not has_key:
        return False
    if settings.app_id is None:
        raise ConfigError(
            "OUROBOT_APP_ID is not set but a private key is: set it to the App's numeric id "
            "(the App's settings page, About, App ID)"
        )
    if not has_key:
        raise ConfigError(
            f"OUROBOT_APP_ID is set but no key: set OUROBOT_PRIVATE_KEY_PATH to {KEY_HELP} "
            "(a .pem file), or OUROBOT_PRIVATE_KEY to its text"
        )
    load_private_key(settings)
    return True


def load_private_key(settings: Settings) -> object:
    """The App's key as cryptography loads it; `ConfigError` naming the variable otherwise."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    variable = (
        "OUROBOT_PRIVATE_KEY" if settings.private_key is not None else "OUROBOT_PRIVATE_KEY_PATH"
    )
    pem = settings.private_key_pem()  # an unreadable path is already a ConfigError
    try:
        key = load_pem_private_key((pem or "").encode(), password=None)
    except (ValueError, TypeError):
        raise ConfigError(f"{variable}: not a PEM private key; use {KEY_HELP}") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ConfigError(f"{variable}: not an RSA key (GitHub Apps sign with RSA); use {KEY_HELP}")
    return key
