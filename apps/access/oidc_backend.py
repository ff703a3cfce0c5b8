"""Single sign-on (OpenID Connect, mozilla-django-oidc): the provider's user is the
local user of the same name (the `OIDC_USERNAME_CLAIM` claim), created at first
sign-in; its grants follow the provider's group claim at every sign-in.

A local account with a password is never taken over by a provider user of its name:
only users made by sign-on (no usable password) match.
"""

import logging
from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from .services.oidc_grants import oidc_grants_apply

logger = logging.getLogger(__name__)


class GrantingOIDCBackend(OIDCAuthenticationBackend):
    def _username(self, claims: dict) -> str:
        name = claims.get(settings.OIDC_USERNAME_CLAIM) or ""
        return name if isinstance(name, str) else ""

    def filter_users_by_claims(self, claims: dict):
        username = self._username(claims)
        if not username:
            return self.UserModel.objects.none()
        return self.UserModel.objects.filter(
            username=username, password__startswith=UNUSABLE_PASSWORD_PREFIX
        )

    def create_user(self, claims: dict) -> Any:
        username = self._username(claims)
        if self.UserModel.objects.filter(username=username).exists():
            logger.warning("single sign-on refused: %r is a local account", username)
            return None
        # No password given: an unusable one, which marks the user as made by sign-on.
        return self.UserModel.objects.create_user(username, email=claims.get("email") or "")

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        if not self._username(claims):
            logger.warning("single sign-on refused: no %r claim", settings.OIDC_USERNAME_CLAIM)
            return None
        user = self.filter_users_by_claims(claims).first() or self.create_user(claims)
        if user is not None:
            oidc_grants_apply(user=user, claims=claims)
        return user
