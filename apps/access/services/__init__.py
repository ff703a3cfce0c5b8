"""Writes of grants, each audited in the same transaction."""

from .grants import grant_create, grant_revoke

__all__ = ["grant_create", "grant_revoke"]
