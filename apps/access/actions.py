"""The audit actions of access: grants made and revoked, by hand or by sign-on claims."""

from enum import StrEnum


class GrantAction(StrEnum):
    CREATED = "grant.created"
    REVOKED = "grant.revoked"
    # A single sign-on changed the user's grants from the identity provider's claims.
    OIDC_APPLIED = "grant.oidc_applied"
