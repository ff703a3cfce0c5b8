"""Writes of grants, each audited in the same transaction."""

from .grants import grant_create, grant_revoke
from .oidc_grants import oidc_grants_apply, oidc_group_grants_parse

__all__ = ["grant_create", "grant_revoke", "oidc_grants_apply", "oidc_group_grants_parse"]
