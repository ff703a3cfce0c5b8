"""The executor's loop: step a plan until it is finished, holding its lease, and give
up on it when Kafka keeps failing."""

import logging
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.db.models import F

from ..kafka_ops import KafkaOpError, KafkaOpNotAuthorized, KafkaOps, kafka_ops_resolve
from ..models import Execution, Plan
from .endings import execution_fail
from .lease import execution_lease_release, execution_lease_take
from .step import execution_step

logger = logging.getLogger(__name__)

MAX_CONSECUTIVE_ERRORS = 10


def execution_run(
    *,
    plan: Plan,
    kafka: KafkaOps | None = None,
    poll_interval: float | None = None,
    max_seconds: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Plan:
    """Step the plan until it is finished (or `max_seconds` pass), holding the lease.

    Kafka errors are retried; after MAX_CONSECUTIVE_ERRORS in a row the plan fails
    (in-flight moves cancelled, throttles removed). A missing ACL fails it at once,
    naming the operation and resource."""
    owner = uuid.uuid4().hex
    if not execution_lease_take(plan=plan, owner=owner):
        logger.info("plan %s is being executed by another worker", plan.pk)
        return plan
    Execution.objects.filter(plan=plan).update(runs=F("runs") + 1)
    kafka = kafka_ops_resolve(cluster=plan.cluster, kafka=kafka)
    poll = float(settings.EXECUTOR_POLL_INTERVAL if poll_interval is None else poll_interval)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    db_down_since: float | None = None
    try:
        while True:
            try:
                if db_down_since is not None and not execution_lease_take(plan=plan, owner=owner):
                    logger.warning("plan %s: lease taken while the database was away", plan.pk)
                    break
                db_down_since = None
                try:
                    finished = execution_step(plan=plan, kafka=kafka)
                    Execution.objects.filter(plan=plan).update(consecutive_errors=0)
                except KafkaOpNotAuthorized as exc:
                    # A missing ACL stays missing: say which at once instead of retrying.
                    logger.warning("plan %s: %s", plan.pk, exc)
                    execution_fail(plan=plan, error=str(exc), kafka=kafka)
                    finished = True
                except KafkaOpError as exc:
                    finished = _step_error(plan=plan, error=str(exc), kafka=kafka)
                if finished:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    break
                if not execution_lease_take(plan=plan, owner=owner):
                    logger.warning("plan %s: lease lost, another worker carries on", plan.pk)
                    break
            except (OperationalError, InterfaceError) as exc:
                # The database went away (restart, failover): nothing more is sent until it
                # answers (a batch is committed before it is sent), then the next step
                # reconciles with Kafka, under the lease taken again. Away longer than a
                # lease: give up; the resume sweep hands the plan to a worker later.
                db_down_since = db_down_since or time.monotonic()
                if time.monotonic() - db_down_since > float(settings.EXECUTOR_LEASE_SECONDS):
                    raise
                logger.warning("plan %s: database unavailable, retrying: %s", plan.pk, exc)
                if not connection.in_atomic_block:
                    connection.close()  # broken: the next query opens a new one
            sleep(poll)
    finally:
        try:
            execution_lease_release(plan=plan, owner=owner)
        except (OperationalError, InterfaceError):
            pass  # the lease lapses on its own
    plan.refresh_from_db()
    return plan


def _step_error(*, plan: Plan, error: str, kafka: KafkaOps) -> bool:
    execution = Execution.objects.get(plan=plan)
    execution.consecutive_errors += 1
    execution.last_error = error
    execution.save(update_fields=["consecutive_errors", "last_error", "updated_at"])
    logger.warning(
        "plan %s step failed (%s in a row): %s", plan.pk, execution.consecutive_errors, error
    )
    if execution.consecutive_errors < MAX_CONSECUTIVE_ERRORS:
        return False
    execution_fail(plan=plan, error=f"Kafka kept failing: {error}", kafka=kafka)
    return True
