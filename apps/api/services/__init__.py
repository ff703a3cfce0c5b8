"""The API's own writes: `refusals` (a refused plan decision is audited) and `tokens`
(API tokens issued and revoked, audited)."""

from .refusals import plan_action_refused_record, plan_request_refused_record
from .tokens import token_create, token_revoke

__all__ = [
    "plan_action_refused_record",
    "plan_request_refused_record",
    "token_create",
    "token_revoke",
]
