"""Secrets at rest: a text field stored Fernet-encrypted.

The one place notifications encrypt anything, so it can be swapped for a shared
encrypted field without touching the rest of the app. The key is derived from
DJANGO_SECRET_KEY: changing that key makes stored URLs and secrets unreadable
(they read as empty, and deliveries to such a channel fail until they are re-entered).
"""

import base64
import hashlib
import logging

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.db import models

logger = logging.getLogger(__name__)


def _fernet() -> Fernet:
    digest = hashlib.sha256(b"kafka-balancer/notifications/" + settings.SECRET_KEY.encode())
    return Fernet(base64.urlsafe_b64encode(digest.digest()))


def text_seal(plain: str) -> str:
    return _fernet().encrypt(plain.encode()).decode() if plain else ""


def text_unseal(sealed: str) -> str:
    if not sealed:
        return ""
    try:
        return _fernet().decrypt(sealed.encode()).decode()
    except InvalidToken:
        logger.warning("a sealed notification value could not be decrypted (key changed?)")
        return ""


class SealedTextField(models.TextField):
    """Plain text in Python, ciphertext in the database."""

    def from_db_value(self, value, expression, connection):
        return value if value is None else text_unseal(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return value if value is None else text_seal(value)
