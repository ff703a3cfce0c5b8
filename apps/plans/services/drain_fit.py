"""The product's own metrics topic in a drain: its replicas follow the drain like any
topic's, and where the brokers left are fewer than its replication factor (RF 3 on
a 3-broker cluster, one drained) its RF is lowered to the brokers left instead of
refusing the drain. It holds samples the product re-reads and can recreate, never
user data; a user topic in the same position still refuses the drain (the engine's
hard goal), naming the partition."""

from dataclasses import dataclass, replace

from django.conf import settings

from apps.balancer import engine
from apps.balancer.engine import SnapshotPartition

from ..selectors import ScopedSnapshot


@dataclass(frozen=True)
class DrainFit:
    """What the planner is given, and what the drain does to the metrics topic apart."""

    # The snapshot without the metrics topic's partitions whose RF is lowered.
    planner_scoped: ScopedSnapshot
    # Alive brokers that stay.
    usable: list[int]
    # Their new replica lists ("led": False where the leader was drained and the
    # leader is yet to be chosen), merged into the planner's plan.
    entries: list[dict]
    # For the plan's report: what happens to the metrics topic, said once.
    note: str


def drain_fit(*, scoped: ScopedSnapshot, removing: set[int]) -> DrainFit:
    """Split the metrics topic's partitions that can't keep their RF on the brokers
    left by a drain of `removing` from what the planner places. Each keeps its
    replicas on brokers that stay, in order, topped up from the other brokers that
    stay where it held fewer of them than there are."""
    topic = settings.METRICS_TOPIC
    snapshot = scoped.snapshot
    usable = sorted(b.id for b in snapshot.brokers if b.alive and b.id not in removing)
    entries: list[dict] = []
    kept: list[SnapshotPartition] = []
    for p in snapshot.partitions:
        replicas = p.replicas
        if p.topic != topic or len(replicas) <= len(usable) or removing.isdisjoint(replicas):
            kept.append(p)
            continue
        after = [b for b in replicas if b in usable]
        after += [b for b in usable if b not in after][: len(usable) - len(after)]
        # Led as it was if its leader stays; else chosen once the planner has placed
        # the rest (drain_fit_merge).
        led = replicas[0] in usable
        entries.append({"topic": topic, "partition": p.partition, "replicas": after, "led": led})
    if not entries:
        return DrainFit(planner_scoped=scoped, usable=usable, entries=[], note="")
    rf_before = max(len(p.replicas) for p in snapshot.partitions if p.topic == topic)
    note = (
        f"{topic} (the balancer's own metrics topic, recreatable): replication factor "
        f"lowered from {rf_before} to {len(usable)} on {len(entries)} partition(s), the "
        f"brokers left after the drain"
    )
    return DrainFit(
        planner_scoped=replace(scoped, snapshot=snapshot.with_partitions(kept)),
        usable=usable,
        entries=entries,
        note=note,
    )


def drain_fit_merge(*, proposal: engine.Proposal, fit: DrainFit) -> engine.Proposal:
    """The planner's proposal with the metrics topic's RF-lowering entries added. One
    whose leader was drained is led by the remaining replica that leads fewest
    partitions once the planner's plan is done (counting first replicas), so the
    drain leaves no leadership skew of its own making."""
    if not fit.entries:
        return proposal
    planned = {(e["topic"], e["partition"]): e["replicas"] for e in proposal.plan["partitions"]}
    leads = dict.fromkeys(fit.usable, 0)
    for p in fit.planner_scoped.snapshot.partitions:
        replicas = planned.get(p.key, p.replicas)
        if replicas and replicas[0] in leads:
            leads[replicas[0]] += 1
    for e in fit.entries:
        if e["led"]:
            leads[e["replicas"][0]] += 1
    entries = []
    for e in fit.entries:
        after = list(e["replicas"])
        if not e["led"]:
            first = min(after, key=lambda b: (leads[b], after.index(b)))
            after = [first, *(b for b in after if b != first)]
            leads[first] += 1
        entries.append({"topic": e["topic"], "partition": e["partition"], "replicas": after})
    plan = {**proposal.plan, "partitions": [*proposal.plan["partitions"], *entries]}
    report = {**proposal.report, "rf_lowered": {"note": fit.note, "partitions": entries}}
    return engine.Proposal(plan=plan, report=report)
