"""Per-broker loads before and after a plan (or a what-if), by the engine's load model."""

import dataclasses
from dataclasses import dataclass

from apps.balancer import engine
from apps.balancer.engine import ClusterSnapshot

from ..models import Plan
from .fingerprint import PartitionKey
from .lists import plan_report_keys
from .snapshot import policy_or_default, snapshot_build


@dataclass(frozen=True)
class LoadsBeforeAfter:
    brokers: list[int]
    # measure -> values aligned with `brokers`
    before: dict[str, list[float]]
    after: dict[str, list[float]]


def snapshot_with_assignment(
    *, snapshot: ClusterSnapshot, replicas: dict[PartitionKey, list[int]]
) -> ClusterSnapshot:
    """A copy of `snapshot` with some partitions' replica lists replaced (the first
    replica leads, as the load model has it). Where the replicas change, their dirs
    are unknown (None)."""
    partitions = []
    for p in snapshot.partitions:
        target = replicas.get(p.key)
        if target is not None:
            dirs = p.log_dirs if list(target) == p.replicas else None
            p = dataclasses.replace(p, replicas=list(target), leader=target[0], log_dirs=dirs)
        partitions.append(p)
    return snapshot.with_partitions(partitions)


def loads_before_after(
    *,
    snapshot: ClusterSnapshot,
    before: dict[PartitionKey, list[int]],
    after: dict[PartitionKey, list[int]],
) -> LoadsBeforeAfter:
    """`snapshot` with `before` applied, then with `after` applied, each through
    engine.broker_loads, so the bars always agree with the planner's figures."""
    loads_before = engine.broker_loads(snapshot_with_assignment(snapshot=snapshot, replicas=before))
    loads_after = engine.broker_loads(snapshot_with_assignment(snapshot=snapshot, replicas=after))
    brokers = sorted(loads_before)
    measures = list(loads_before[brokers[0]])  # a snapshot has at least one broker
    return LoadsBeforeAfter(
        brokers=brokers,
        before={m: [loads_before[b][m] for b in brokers] for m in measures},
        after={m: [loads_after[b][m] for b in brokers] for m in measures},
    )


def plan_loads_before_after(*, plan: Plan) -> LoadsBeforeAfter | None:
    """Per-broker loads before and after the plan. The planner's own figures, stored in
    the report when the plan was made (report["broker_loads"]), read alone; a plan
    without them (a rollback, or one made before they were stored) has them computed:
    its partitions as before and as after, the rest as synced now. None when the
    cluster has nothing the planner can model."""
    stored = plan_report_keys(plan=plan, keys=["broker_loads"]).get("broker_loads")
    if stored:
        return LoadsBeforeAfter(
            brokers=stored["brokers"], before=stored["before"], after=stored["after"]
        )
    policy = policy_or_default(cluster=plan.cluster)
    snapshot = snapshot_build(cluster=plan.cluster, policy=policy).snapshot
    if not snapshot.partitions:
        return None
    moves = list(plan.moves.values_list("topic", "partition", "replicas_before", "replicas_after"))
    try:
        return loads_before_after(
            snapshot=snapshot,
            before={(t, p): b for t, p, b, _ in moves},
            after={(t, p): a for t, p, _, a in moves},
        )
    except engine.BalancerError:
        # e.g. a plan naming a broker the cluster no longer has: show no bars.
        return None
