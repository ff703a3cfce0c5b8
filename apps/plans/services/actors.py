"""The system actors the plan services name in the audit trail when no operator acted."""

from apps.audit.services import actor_system

DETECTOR = actor_system(name="detector")
EXECUTOR = actor_system(name="executor")
