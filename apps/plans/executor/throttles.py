"""Replication throttles around an execution: set before the first data move, as
kafka-reassign-partitions.sh does, and deleted again when the plan ends.

What is set is recorded on the execution before it is sent to Kafka, so a worker
killed right after still cleans it up. Throttles are deleted, never restored to an
earlier value: a value read just after another plan's cleanup may still be that
plan's (configs propagate asynchronously), and writing it back would leave a
throttle behind for good.
"""

import logging

from ..actions import ExecutionAction
from ..kafka_ops import BROKER_THROTTLE_KEYS, TOPIC_THROTTLE_KEYS, KafkaOps
from ..models import ACTIVE_STATES, Execution, MoveState, Plan, PlanMove
from ..services.actors import EXECUTOR
from ..services.plan_audit import plan_audit_record
from ..services.policy import policy_get
from .disk_moves import DISK_THROTTLE_KEY

logger = logging.getLogger(__name__)


def _broker_keys(recorded: dict) -> tuple[str, ...]:
    """The broker configs this run sets: the replication rates, and with disk moves
    (JBOD) the rate of copies between the dirs of one broker too."""
    return BROKER_THROTTLE_KEYS + ((DISK_THROTTLE_KEY,) if recorded.get("disk") else ())


def throttle_rate_wanted(*, plan: Plan, execution: Execution) -> int:
    """Bytes/s this run should copy at: the operator's choice for it, else the policy's."""
    if execution.throttle_rate is not None:
        return int(execution.throttle_rate)
    return int(policy_get(cluster=plan.cluster).throttle_bytes_per_sec)


def throttles_retune(*, plan: Plan, execution: Execution, kafka: KafkaOps) -> None:
    """Apply an operator's new rate to the throttles already set (0: delete them; the
    next batch sets them again if the rate goes back up)."""
    if not execution.throttle_applied or execution.throttle_rate is None:
        return
    recorded = dict(execution.throttle or {})
    rate = int(execution.throttle_rate)
    if recorded.get("rate") == rate:
        return
    if rate <= 0:
        throttles_remove(plan=plan, execution=execution, kafka=kafka)
        return
    alive = kafka.brokers_alive()
    brokers = [int(b) for b in recorded.get("brokers", []) if int(b) in alive]
    keys = _broker_keys(recorded)
    kafka.configs_write({b: {k: str(rate) for k in keys} for b in brokers}, {})
    before = recorded.get("rate")
    execution.throttle = {**recorded, "rate": rate}
    execution.save(update_fields=["throttle", "updated_at"])
    plan_audit_record(
        actor=EXECUTOR,
        action=ExecutionAction.THROTTLE_CHANGED,
        plan=plan,
        before={"rate": before},
        after={"rate": rate, "brokers": brokers},
    )


def throttles_set(
    *, plan: Plan, execution: Execution, moves: list[PlanMove], kafka: KafkaOps
) -> None:
    """Throttle the run's rate (the operator's, else the policy's) on the brokers and
    replicas the data moves touch."""
    rate = throttle_rate_wanted(plan=plan, execution=execution)
    if rate <= 0:
        return
    data_moves = [m for m in moves if not m.leader_only and m.state != MoveState.DONE]
    alive = kafka.brokers_alive()
    brokers = sorted({b for m in data_moves for b in m.replicas_before + m.replicas_after} & alive)
    leader_replicas: dict[str, list[str]] = {}
    follower_replicas: dict[str, list[str]] = {}
    for m in data_moves:
        # As kafka-reassign-partitions.sh: throttle the current replicas as leaders
        # (they send) and the new ones as followers (they fetch).
        leader_replicas.setdefault(m.topic, []).extend(
            f"{m.partition}:{b}" for b in m.replicas_before
        )
        follower_replicas.setdefault(m.topic, []).extend(f"{m.partition}:{b}" for b in m.added)
    topics = sorted(leader_replicas)
    # Recorded before anything is set, so a crash right after still gets cleaned up.
    execution.throttle = {"rate": rate, "brokers": brokers, "topics": topics}
    if any(m.log_dirs_after for m in data_moves):
        execution.throttle["disk"] = True
    execution.throttle_applied = True
    execution.save(update_fields=["throttle", "throttle_applied", "updated_at"])
    keys = _broker_keys(execution.throttle)
    broker_values = {b: {k: str(rate) for k in keys} for b in brokers}
    topic_values = {
        t: {
            k: ",".join(v)
            for k, v in (
                (TOPIC_THROTTLE_KEYS[0], leader_replicas[t]),
                (TOPIC_THROTTLE_KEYS[1], follower_replicas.get(t, [])),
            )
            if v
        }
        for t in topics
    }
    kafka.configs_write(broker_values, topic_values)
    # Dynamic configs reach the brokers asynchronously: a batch sent before would copy
    # unthrottled for a moment.
    if not kafka.broker_rates_wait(brokers, str(rate), timeout=10.0):
        logger.warning("plan %s: throttle not yet visible on every broker", plan.pk)
    plan_audit_record(
        actor=EXECUTOR,
        action=ExecutionAction.THROTTLE_SET,
        plan=plan,
        after={"rate": rate, "brokers": brokers, "topics": topic_values},
    )


def throttles_remove(*, plan: Plan, execution: Execution, kafka: KafkaOps) -> None:
    """Delete the throttles this execution set, as kafka-reassign-partitions.sh --verify
    does. Raises KafkaOpError if it can't; the caller (or the resume sweep) retries."""
    if not execution.throttle_applied:
        return
    recorded = execution.throttle or {}
    alive = kafka.brokers_alive()
    brokers = [int(b) for b in recorded.get("brokers", [])]
    if plan.state not in ACTIVE_STATES:
        # A finished plan's leftover (a broker that was dead) must not delete the rate a
        # running plan has set on that broker since: that plan deletes it when it ends.
        owned = {
            int(b)
            for other in Execution.objects.filter(
                plan__cluster_id=plan.cluster_id,
                plan__state__in=ACTIVE_STATES,
                throttle_applied=True,
            ).exclude(pk=execution.pk)
            for b in (other.throttle or {}).get("brokers", [])
        }
        brokers = [b for b in brokers if b not in owned]
    # A dead broker can't be reached, and its dynamic rate outlives it (it is in the
    # cluster metadata): it stays recorded, and the resume sweep deletes it once the
    # broker is back.
    skipped = [b for b in brokers if b not in alive]
    broker_values: dict[int, dict[str, str | None]] = {
        b: dict.fromkeys(_broker_keys(recorded)) for b in brokers if b in alive
    }
    topic_values: dict[str, dict[str, str | None]] = {
        t: dict.fromkeys(TOPIC_THROTTLE_KEYS) for t in recorded.get("topics", [])
    }
    if not broker_values and not topic_values:
        if not skipped:  # everything left was handed over to a running plan
            execution.throttle_applied = False
            execution.save(update_fields=["throttle_applied", "updated_at"])
        return  # else only dead brokers left: try again at the next sweep
    kafka.configs_write(broker_values, topic_values)
    if skipped:
        execution.throttle = {**recorded, "brokers": skipped, "topics": []}
    execution.throttle_applied = bool(skipped)
    execution.save(update_fields=["throttle", "throttle_applied", "updated_at"])
    plan_audit_record(
        actor=EXECUTOR,
        action=ExecutionAction.THROTTLE_REMOVED,
        plan=plan,
        before={"rate": recorded.get("rate")},
        after={
            "brokers": sorted(broker_values),
            "topics": sorted(topic_values),
            "unreachable": skipped,
        },
    )
