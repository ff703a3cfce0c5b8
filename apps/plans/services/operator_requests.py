"""An operator asks for a plan by mode (full rebalance, add or remove brokers,
self-healing, leaders only): checked, planned on the live model, and proposed."""

from collections.abc import Iterable

from django.contrib.auth.base_user import AbstractBaseUser

from apps.balancer import engine
from apps.clusters.models import Cluster

from ..errors import PlanRequestInvalid
from ..models import Plan, PlanMode, PlanOrigin
from ..selectors import drained_broker_ids, snapshot_build
from .creation import plan_create_from_proposal
from .drain_fit import drain_fit, drain_fit_merge
from .permissions import permission_require
from .planner import planner_run
from .policy import policy_get

REQUESTABLE_MODES = (
    PlanMode.FULL,
    PlanMode.ADD_BROKERS,
    PlanMode.REMOVE_BROKERS,
    PlanMode.FIX_OFFLINE,
    PlanMode.LEADERS,
    PlanMode.DEMOTE,
    PlanMode.REMOVE_DISKS,
)


def plan_request(
    *,
    cluster: Cluster,
    user: AbstractBaseUser,
    mode: str,
    brokers: Iterable[int] = (),
    disks: Iterable[str | tuple[int, str]] = (),
    reason: str = "",
    allow_data_loss: bool = False,
    client_address: str | None = None,
) -> Plan:
    """An operator asks for a plan: full rebalance, add / remove brokers, self-healing
    or leaders only. Refused with a clear message when invalid or when there is
    nothing to change."""
    permission_require(user=user, perm="plans.request_plan", what="request plans", cluster=cluster)
    if mode not in REQUESTABLE_MODES:
        known = ", ".join(REQUESTABLE_MODES)
        raise PlanRequestInvalid(f"unknown mode {mode!r} (known: {known})")
    try:
        broker_ids = sorted({int(b) for b in brokers})
    except (TypeError, ValueError) as exc:
        raise PlanRequestInvalid("broker ids must be integers") from exc
    dirs = _disks_parsed(disks)
    if bool(dirs) != (mode == PlanMode.REMOVE_DISKS):
        raise PlanRequestInvalid(
            "remove-disks needs the log dirs to empty (BROKER:DIR)"
            if mode == PlanMode.REMOVE_DISKS
            else f"mode {mode} takes no log dirs"
        )
    if dirs and broker_ids:
        raise PlanRequestInvalid("remove-disks names its brokers in the dirs (BROKER:DIR) only")
    broker_ids = sorted({b for b, _ in dirs}) if dirs else broker_ids
    if allow_data_loss and mode not in (PlanMode.FIX_OFFLINE, PlanMode.FULL):
        raise PlanRequestInvalid("only self-healing or a full rebalance may allow data loss")
    known_ids = set(cluster.brokers.values_list("node_id", flat=True))
    unknown = [b for b in broker_ids if b not in known_ids]
    if unknown:
        raise PlanRequestInvalid(f"broker {unknown[0]} is not part of cluster {cluster.name}")
    drained = drained_broker_ids(cluster=cluster)
    draining = mode == PlanMode.REMOVE_BROKERS
    if drained and not draining and set(broker_ids) & drained:
        b = min(set(broker_ids) & drained)
        raise PlanRequestInvalid(
            f"broker {b} is drained: undrain it on the cluster page before placing replicas on it"
        )
    policy = policy_get(cluster=cluster)
    scoped = snapshot_build(cluster=cluster, policy=policy, draining=draining)
    planner_scoped, planner_brokers, fit = scoped, broker_ids, None
    if draining:
        # Brokers drained before stay empty: drained again with the ones asked for.
        in_snapshot = {b.id for b in scoped.snapshot.brokers}
        planner_brokers = sorted(set(broker_ids) | (drained & in_snapshot))
        fit = drain_fit(scoped=scoped, removing=set(planner_brokers))
        planner_scoped = fit.planner_scoped
    proposal = planner_run(
        scoped=planner_scoped,
        policy=policy,
        mode=mode,
        brokers=[] if dirs else planner_brokers,
        disks=dirs,
        allow_data_loss=allow_data_loss,
    )
    if fit is not None:
        proposal = drain_fit_merge(proposal=proposal, fit=fit)
    if not proposal.plan["partitions"]:
        raise PlanRequestInvalid("nothing to change: the planner found no better assignment")
    return plan_create_from_proposal(
        cluster=cluster,
        scoped=scoped,
        proposal=proposal,
        origin=PlanOrigin.OPERATOR,
        mode=mode,
        brokers=broker_ids,
        disks=dirs,
        trigger=f"requested by {user.get_username()}",
        actor=user,
        requested_by=user,
        request_reason=reason,
        client_address=client_address,
    )


def _disks_parsed(disks: Iterable[str | tuple[int, str]]) -> list[tuple[int, str]]:
    """(broker id, path) pairs from "BROKER:DIR" strings or pairs, refused when malformed."""
    out: list[tuple[int, str]] = []
    for item in disks:
        if isinstance(item, list | tuple) and len(item) == 2:
            item = f"{item[0]}:{item[1]}" if type(item[0]) is int else ""
        pair = engine.disk_parse(item) if isinstance(item, str) else None
        if pair is None:
            raise PlanRequestInvalid(f"a log dir to empty is BROKER:DIR, got {item!r}")
        out.append(pair)
    return sorted(set(out))
