"""The API's own writes, each audited: `refusals` (a refused plan decision or request),
`tokens` (API tokens issued or revoked)."""

from .refusals import plan_action_refused_record, plan_request_refused_record
from .tokens import token_create, token_revoke

__all__ = [
    "plan_action_refused_record",
    "plan_request_refused_record",
    "token_create",
    "token_revoke",
]
