"""The audit actions of access: grants made and revoked."""

from enum import StrEnum


class GrantAction(StrEnum):
    CREATED = "grant.created"
    REVOKED = "grant.revoked"
