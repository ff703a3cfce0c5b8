"""A plan's estimate: bytes to copy from its replicas' log sizes now, and how long
copying them should take. Made at proposal and again at approval, so the page
shows what the cluster holds when the operator decides, not an old window's guess."""

import logging

from django.db import transaction
from django.utils import timezone

from apps.clusters.models import Cluster

from ..kafka_ops import KafkaOpError, KafkaOps, kafka_ops_resolve
from ..models import Execution, Plan, PlanMove, PlanState
from .policy import policy_get

logger = logging.getLogger(__name__)

ReplicaSizes = dict[tuple[str, int, int], int]


def move_bytes_from_logs(*, moves: list[PlanMove], sizes: ReplicaSizes) -> None:
    """Each move's bytes: its largest current replica (the one a new replica catches
    up with) times the replicas it adds. A partition Kafka reports no replica of keeps
    the bytes it had."""
    for m in moves:
        keys = [(m.topic, m.partition, b) for b in m.replicas_before]
        known = [sizes[k] for k in keys if k in sizes]
        if known:
            m.bytes = max(known) * len(m.added)


def duration_estimate(
    *, cluster: Cluster, bytes_to_move: int, throttle_rate: int | None
) -> float | None:
    """Seconds to copy `bytes_to_move`: at the rate this cluster's last completed
    execution copied (what its brokers really do), else at the throttle; None when
    neither is known (the first unthrottled run)."""
    if bytes_to_move <= 0:
        return 0.0
    rate = _observed_rate(cluster=cluster)
    if rate is None and throttle_rate:
        rate = float(throttle_rate)
    return bytes_to_move / rate if rate else None


def plan_estimate(
    *, plan: Plan, kafka: KafkaOps | None = None, throttle_rate: int | None = None
) -> Plan:
    """Re-estimate `plan` from its replicas' log sizes now (one DescribeLogDirs per
    broker). An unreachable cluster keeps the earlier byte counts, re-timed."""
    moves = list(plan.moves.all())
    try:
        sizes = kafka_ops_resolve(cluster=plan.cluster, kafka=kafka).replica_sizes()
    except KafkaOpError as exc:
        logger.warning("plan #%s not re-estimated: %s", plan.pk, exc)
        return plan
    move_bytes_from_logs(moves=moves, sizes=sizes)
    if throttle_rate is None:
        chosen = Execution.objects.filter(plan=plan).values_list("throttle_rate", flat=True)
        throttle_rate = chosen.first()
    if throttle_rate is None:
        throttle_rate = policy_get(cluster=plan.cluster).throttle_bytes_per_sec
    plan.bytes_to_move = sum(m.bytes for m in moves)
    plan.bytes_estimated_at = timezone.now()
    plan.duration_estimate_seconds = duration_estimate(
        cluster=plan.cluster, bytes_to_move=plan.bytes_to_move, throttle_rate=throttle_rate
    )
    with transaction.atomic():
        PlanMove.objects.bulk_update(moves, ["bytes"])
        plan.save(
            update_fields=["bytes_to_move", "bytes_estimated_at", "duration_estimate_seconds"]
        )
    return plan


def _observed_rate(*, cluster: Cluster) -> float | None:
    last = (
        Plan.objects.filter(cluster=cluster, state=PlanState.COMPLETED)
        .exclude(started_at=None)
        .exclude(finished_at=None)
        .order_by("-finished_at")
        .first()
    )
    if last is None:
        return None
    copied = sum(b or 0 for b in last.moves.values_list("bytes_copied", flat=True))
    seconds = (last.finished_at - last.started_at).total_seconds()
    return copied / seconds if copied > 0 and seconds > 0 else None
