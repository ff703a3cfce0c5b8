"""API tokens, kept only as a SHA-256 digest: the key is shown once, when issued.

A key is 160 random bits, so a fast digest is enough (a slow password hash defends
guessable secrets, which these are not) and it can be looked up by an index. One token
per user, presented as `Authorization: Token <key>` (apps.api.authentication).
"""

import hashlib
import secrets

from django.conf import settings
from django.db import models

KEY_BYTES = 20


def token_key_generate() -> str:
    return secrets.token_hex(KEY_BYTES)


def token_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiToken(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_token"
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"API token of {self.user}"
