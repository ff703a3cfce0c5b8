"""API tokens: issued to a user who signs in with a password, revoked by that user or an
admin; both audited (against the user, never with the key). Only the key's digest is
stored (models.ApiToken): the key is returned once, by `token_create`."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from apps.audit.actions import AuthAction
from apps.audit.services import Actor, audit_record

from ..models import ApiToken, token_digest, token_key_generate


def token_create(
    *, user: AbstractBaseUser, actor: Actor | None = None, client_address: str | None = None
) -> str:
    """A new key for `user` (audited as auth.token_created), replacing any earlier one:
    a stored digest cannot be turned back into the key it was made from."""
    key = token_key_generate()
    with transaction.atomic():
        replaced, _ = ApiToken.objects.filter(user=user).delete()
        ApiToken.objects.create(user=user, digest=token_digest(key))
        audit_record(
            actor=actor or user,
            action=AuthAction.TOKEN_CREATED,
            obj=user,
            after={"replaced": bool(replaced)},
            client_address=client_address,
        )
    return key


def token_revoke(
    *, user: AbstractBaseUser, actor: Actor, client_address: str | None = None
) -> bool:
    """Delete `user`'s token so it stops authenticating. False if there was none."""
    with transaction.atomic():
        deleted, _ = ApiToken.objects.filter(user=user).delete()
        if deleted:
            audit_record(
                actor=actor,
                action=AuthAction.TOKEN_REVOKED,
                obj=user,
                client_address=client_address,
            )
    return bool(deleted)
