"""API tokens: issued to a user who signs in with a password, revoked by that user or an
admin; both audited (against the user, never with the key)."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token

from apps.audit.actions import AuthAction
from apps.audit.services import Actor, audit_record


def token_create(*, user: AbstractBaseUser, client_address: str | None = None) -> Token:
    """The user's token: the existing one, or a new one (audited as auth.token_created)."""
    with transaction.atomic():
        token, created = Token.objects.get_or_create(user=user)
        if created:
            audit_record(
                actor=user, action=AuthAction.TOKEN_CREATED, obj=user, client_address=client_address
            )
    return token


def token_revoke(
    *, user: AbstractBaseUser, actor: Actor, client_address: str | None = None
) -> bool:
    """Delete `user`'s token so it stops authenticating. False if there was none."""
    with transaction.atomic():
        deleted, _ = Token.objects.filter(user=user).delete()
        if deleted:
            audit_record(
                actor=actor,
                action=AuthAction.TOKEN_REVOKED,
                obj=user,
                client_address=client_address,
            )
    return bool(deleted)
