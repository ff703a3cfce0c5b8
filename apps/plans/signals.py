"""The signals the plans app sends, so that other apps (the dashboard's live pages)
can follow its work without the plans app knowing about them.

Sent with `send_robust` from inside the executor's step, possibly inside a
transaction: a receiver's error is logged by Django and never stops an execution,
and a receiver that talks to the outside world defers it with
`transaction.on_commit`.
"""

from django.dispatch import Signal

# An executing plan polled Kafka and recorded its progress. Sender: the Plan class.
# Arguments: plan (Plan), done and total (moves), bytes_done (bytes copied so far).
execution_progressed = Signal()

# Something happened to a plan and was written to the audit trail in the transaction
# that made it: a state change, a decision, an executor step. Sender: the Plan class.
# Arguments: plan (Plan), action (a PlanAction or ExecutionAction), audit_event
# (the AuditEvent row).
plan_changed = Signal()
