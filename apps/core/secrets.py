"""Encryption of every stored secret (cluster SASL passwords and TLS private keys,
notification URLs and signing secrets) with Fernet: the one sealing module of the product.

The keys come from BALANCER_SECRET_KEYS (comma-separated Fernet keys). The first
encrypts; every key decrypts, so a new key can be put first while the old ones
still read what they wrote, until `manage.py rotate_secrets` re-encrypts
everything with the first (docs/security.md). settings.py leaves the list empty
only with DEBUG on (it refuses to start otherwise): then a key derived from the
dev SECRET_KEY lets the dev setup run without configuration.
"""

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

SETTING = "BALANCER_SECRET_KEYS"


class SecretDecryptError(Exception):
    """A stored secret cannot be read with any of the configured keys."""


def secret_key_generate() -> str:
    return Fernet.generate_key().decode()


def _dev_key() -> str:
    # Stable across restarts, so a dev database stays readable; useless elsewhere
    # because the dev SECRET_KEY is public.
    digest = hashlib.sha256(b"kafka-balancer secrets:" + settings.SECRET_KEY.encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()


def secret_keys() -> tuple[str, ...]:
    """The configured keys, the first one encrypting."""
    keys = tuple(k.strip() for k in settings.BALANCER_SECRET_KEYS if k.strip())
    return keys or (_dev_key(),)


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    fernets = []
    for position, key in enumerate(keys, start=1):
        try:
            fernets.append(Fernet(key))
        except (ValueError, TypeError) as exc:
            # Never echo the key itself: it may be a real one with a typo.
            raise ImproperlyConfigured(
                f"{SETTING}: key {position} of {len(keys)} is not a Fernet key "
                "(32 url-safe base64-encoded bytes)"
            ) from exc
    return MultiFernet(fernets)


def secrets_fernet() -> MultiFernet:
    return _fernet(secret_keys())


def secret_encrypt(plaintext: str) -> str:
    return secrets_fernet().encrypt(plaintext.encode()).decode()


def secret_decrypt(token: str) -> str:
    try:
        return secrets_fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretDecryptError(
            f"a stored secret does not decrypt with any key in {SETTING} "
            "(was a key removed before `manage.py rotate_secrets` ran?)"
        ) from exc


def secret_rotate(token: str) -> str:
    """The same secret, encrypted with the first key."""
    try:
        return secrets_fernet().rotate(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretDecryptError(
            f"a stored secret does not decrypt with any key in {SETTING}"
        ) from exc
