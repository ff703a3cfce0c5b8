"""A plan as Kafka's reassignment JSON (kafka-reassign-partitions.sh)."""

import json

from ..models import Plan


def plan_export_json(*, plan: Plan) -> str:
    """Exactly what kafka-reassign-partitions.sh --execute accepts."""
    return json.dumps(plan.reassignment, indent=2) + "\n"


def plan_rollback_export_json(*, plan: Plan) -> str:
    """The reassignment that puts every partition of the plan back where it started."""
    return json.dumps(plan.rollback_reassignment, indent=2) + "\n"
