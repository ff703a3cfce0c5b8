"""A stand-alone executor process for the killed-worker test (not a test module).

    python tests/plans/worker_process.py start  CLUSTER BOOTSTRAP TOPIC PLAN_JSON
    python tests/plans/worker_process.py resume
    python tests/plans/worker_process.py report

Uses its own SQLite file (DATABASE_URL), so the test can SIGKILL it mid-execution
and start another process on the same database, as a restarted worker would.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from apps.audit.models import AuditEvent  # noqa: E402
from apps.clusters.services import cluster_register, cluster_sync  # noqa: E402
from apps.plans.executor import executions_resume  # noqa: E402
from apps.plans.models import Execution, Plan, PlanMode, PlanOrigin  # noqa: E402
from apps.plans.services import (  # noqa: E402
    plan_approve,
    plan_create,
    policy_get,
    policy_update,
)


def start(cluster_name: str, bootstrap: str, topic: str, plan_json: str) -> None:
    call_command("migrate", verbosity=0)
    admin = get_user_model().objects.create_superuser("boss", password="x-not-used")
    cluster = cluster_register(name=cluster_name, bootstrap_servers=bootstrap)
    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    policy_update(
        policy=policy_get(cluster=cluster),
        actor=admin,
        changes={"topics_include": [topic], "throttle_bytes_per_sec": 400_000},
    )
    reassignment = json.loads(plan_json)
    current = {
        (p.topic.name, p.index): p.replicas
        for p in cluster.topics.get(name=topic).partitions.select_related("topic")
    }
    plan = plan_create(
        cluster=cluster,
        origin=PlanOrigin.OPERATOR,
        mode=PlanMode.FULL,
        reassignment=reassignment,
        assignment_before=current,
        report={},
        actor=admin,
    )
    print(f"PLAN {plan.pk}", flush=True)
    # Approval enqueues the execution task; CELERY_TASK_ALWAYS_EAGER runs it right here.
    plan_approve(plan=plan, user=admin)
    print("FINISHED", flush=True)  # the test kills us long before


def resume() -> None:
    # What a restarted worker does: the resume sweep enqueues, the task runs (eagerly here).
    print(json.dumps({"resumed": executions_resume()}), flush=True)


def report() -> None:
    plan = Plan.objects.get()
    execution = Execution.objects.get(plan=plan)
    print(
        json.dumps(
            {
                "state": plan.state,
                "error": plan.error,
                "runs": execution.runs,
                "throttle_applied": execution.throttle_applied,
                "leaders_elected": execution.leaders_elected,
                "lease_until": execution.lease_until and execution.lease_until.timestamp(),
                "moves": {
                    f"{m.topic}-{m.partition}": [m.state, m.submissions, m.batch]
                    for m in plan.moves.all()
                },
                "actions": list(AuditEvent.objects.order_by("id").values_list("action", flat=True)),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    {"start": start, "resume": resume, "report": report}[sys.argv[1]](*sys.argv[2:])
