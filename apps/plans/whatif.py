"""What-if: the plan the balancer would make for a changed copy of a cluster.

A read: nothing is stored, proposed or audited. Not in `selectors/` because it
plans with the policy's options, which the services own (selectors import no service).
"""

import copy
from dataclasses import dataclass
from typing import Any

from apps.balancer import engine
from apps.balancer.engine import SnapshotBroker
from apps.clusters.models import Cluster
from apps.core.bounds import BROKER_ID_MAX

from .errors import PlanRequestInvalid
from .selectors import (
    LoadsBeforeAfter,
    ScopedSnapshot,
    drained_broker_ids,
    loads_before_after,
    policy_or_default,
    snapshot_build,
)
from .services import planner_options
from .services.drain_fit import drain_fit, drain_fit_merge

MAX_TRAFFIC_SCALE = 100.0
# Brokers a what-if may add or remove: the planner's time grows with brokers × partitions,
# and any viewer may ask (tests/security/test_input_whatif_size.py measures the limit).
WHATIF_BROKERS_MAX = 64


@dataclass(frozen=True)
class WhatIf:
    mode: str
    brokers: list[int]
    traffic_scale: float
    plan: dict[str, Any]
    report: dict[str, Any]
    loads: LoadsBeforeAfter


def whatif_simulate(
    *,
    cluster: Cluster,
    add_brokers: list[dict[str, Any]] | None = None,
    remove_brokers: list[int] | None = None,
    traffic_scale: float = 1.0,
) -> WhatIf:
    """Plan against a changed copy of the cluster: brokers added (id, rack) or removed,
    traffic scaled. Nothing is stored, proposed or audited."""
    add_brokers = add_brokers or []
    remove_brokers = sorted(set(remove_brokers or []))
    if add_brokers and remove_brokers:
        raise PlanRequestInvalid("simulate adding or removing brokers, not both at once")
    if len(add_brokers) > WHATIF_BROKERS_MAX or len(remove_brokers) > WHATIF_BROKERS_MAX:
        raise PlanRequestInvalid(f"simulate at most {WHATIF_BROKERS_MAX} brokers at once")
    if any(not 0 <= b <= BROKER_ID_MAX for b in [*remove_brokers, *(a["id"] for a in add_brokers)]):
        raise PlanRequestInvalid(f"a broker id is from 0 to {BROKER_ID_MAX}")
    if not 0 < traffic_scale <= MAX_TRAFFIC_SCALE:
        raise PlanRequestInvalid(f"traffic_scale must be in (0, {MAX_TRAFFIC_SCALE:g}]")
    policy = policy_or_default(cluster=cluster)
    # A simulated drain sees what a requested one sees (operator_requests.plan_request).
    draining = bool(remove_brokers)
    scoped = snapshot_build(cluster=cluster, policy=policy, draining=draining)
    snapshot = copy.deepcopy(scoped.snapshot)
    if not snapshot.partitions:
        raise PlanRequestInvalid("the cluster has no partitions the balancer manages yet")
    known = {b.id for b in snapshot.brokers}
    added_ids = []
    drained = drained_broker_ids(cluster=cluster)
    for broker in add_brokers:
        if broker["id"] in drained:
            raise PlanRequestInvalid(f"broker {broker['id']} exists and is drained")
        if broker["id"] in known:
            raise PlanRequestInvalid(f"broker {broker['id']} already exists")
        known.add(broker["id"])
        added_ids.append(broker["id"])
        snapshot.brokers.append(SnapshotBroker(id=broker["id"], rack=broker.get("rack")))
    unknown = [b for b in remove_brokers if b not in known]
    if unknown:
        raise PlanRequestInvalid(f"broker {unknown[0]} is not part of cluster {cluster.name}")
    if traffic_scale != 1.0:
        for p in snapshot.partitions:
            if p.load is not None:
                load = dict(p.load)
                for key in ("bytes_in", "bytes_out", "messages_in"):
                    load[key] = load.get(key, 0.0) * traffic_scale
                p.load = load
    if added_ids:
        mode, brokers = "add-brokers", added_ids
    elif remove_brokers:
        mode, brokers = "remove-brokers", remove_brokers
    else:
        mode, brokers = "full", []
    planned, fit = snapshot, None
    if draining:
        removing = set(brokers) | (drained & known)
        fit = drain_fit(scoped=ScopedSnapshot(snapshot=snapshot, unplaceable=[]), removing=removing)
        planned, brokers = fit.planner_scoped.snapshot, sorted(removing)
    try:
        proposal = engine.propose(
            planned, mode=mode, brokers=brokers, options=planner_options(policy=policy)
        )
    except engine.BalancerError as exc:
        raise PlanRequestInvalid(f"the planner refused: {exc}") from exc
    if fit is not None:
        proposal = drain_fit_merge(proposal=proposal, fit=fit)
    before = {p.key: p.replicas for p in snapshot.partitions}
    after = {(e["topic"], e["partition"]): e["replicas"] for e in proposal.plan["partitions"]}
    return WhatIf(
        mode=mode,
        brokers=brokers,
        traffic_scale=traffic_scale,
        plan=proposal.plan,
        report=proposal.report,
        loads=loads_before_after(snapshot=snapshot, before=before, after=after),
    )
