"""The audit actions of sign-in and of accounts: who signed in or out, which API tokens
were made or revoked, which users and groups an administrator changed."""

from enum import StrEnum


class AuthAction(StrEnum):
    LOGIN = "auth.login"
    LOGOUT = "auth.logout"
    LOGIN_FAILED = "auth.login_failed"
    LOCKED_OUT = "auth.locked_out"
    TOKEN_CREATED = "auth.token_created"
    TOKEN_REVOKED = "auth.token_revoked"


class AccountAction(StrEnum):
    USER_CREATED = "user.created"
    USER_CHANGED = "user.changed"
    USER_DELETED = "user.deleted"
    USER_PASSWORD_CHANGED = "user.password_changed"
    GROUP_CREATED = "group.created"
    GROUP_CHANGED = "group.changed"
    GROUP_DELETED = "group.deleted"


# (account kind, what happened to it) -> its action, for the admin's account pages.
ACCOUNT_ACTIONS: dict[tuple[str, str], AccountAction] = {
    ("user", "created"): AccountAction.USER_CREATED,
    ("user", "changed"): AccountAction.USER_CHANGED,
    ("user", "deleted"): AccountAction.USER_DELETED,
    ("group", "created"): AccountAction.GROUP_CREATED,
    ("group", "changed"): AccountAction.GROUP_CHANGED,
    ("group", "deleted"): AccountAction.GROUP_DELETED,
}
