"""The product's own metrics topic in a drain: its replicas follow the drain like any
topic's, and where the brokers left are fewer than its replication factor (RF 3 on
a 3-broker cluster, one drained) its RF is lowered to the brokers left instead of
refusing the drain. It holds samples the product re-reads and can recreate, never
user data; a user topic in the same position still refuses the drain (the engine's
hard goal), naming the partition."""

from dataclasses import dataclass, replace

from django.conf import settings

from apps.balancer import engine

from ..selectors import ScopedSnapshot


@dataclass(frozen=True)
class DrainFit:
    """What the planner is given, and what the drain does to the metrics topic apart."""

    # The snapshot without the metrics topic's partitions whose RF is lowered.
    planner_scoped: ScopedSnapshot
    # Reassignment entries lowering their RF, merged into the planner's plan.
    entries: list[dict]
    # For the plan's report: what happens to the metrics topic, said once.
    note: str


def drain_fit(*, scoped: ScopedSnapshot, removing: set[int]) -> DrainFit:
    """Split the metrics topic's partitions that can't keep their RF on the brokers
    left by a drain of `removing` from what the planner places. Each keeps its
    replicas on brokers that stay, in order (the first one left leads), topped up
    from the other brokers that stay where it held fewer of them than there are."""
    topic = settings.METRICS_TOPIC
    snapshot = scoped.snapshot
    usable = sorted(b["id"] for b in snapshot["brokers"] if b["alive"] and b["id"] not in removing)
    entries: list[dict] = []
    kept: list[dict] = []
    for p in snapshot["partitions"]:
        replicas = p["replicas"]
        if p["topic"] != topic or len(replicas) <= len(usable) or removing.isdisjoint(replicas):
            kept.append(p)
            continue
        after = [b for b in replicas if b in usable]
        after += [b for b in usable if b not in after][: len(usable) - len(after)]
        entries.append({"topic": topic, "partition": p["partition"], "replicas": after})
    if not entries:
        return DrainFit(planner_scoped=scoped, entries=[], note="")
    rf_before = max(len(p["replicas"]) for p in snapshot["partitions"] if p["topic"] == topic)
    note = (
        f"{topic} (the balancer's own metrics topic, recreatable): replication factor "
        f"lowered from {rf_before} to {len(usable)} on {len(entries)} partition(s), the "
        f"brokers left after the drain"
    )
    return DrainFit(
        planner_scoped=replace(scoped, snapshot={**snapshot, "partitions": kept}),
        entries=entries,
        note=note,
    )


def drain_fit_merge(*, proposal: engine.Proposal, fit: DrainFit) -> engine.Proposal:
    """The planner's proposal with the metrics topic's RF-lowering entries added."""
    if not fit.entries:
        return proposal
    plan = {**proposal.plan, "partitions": [*proposal.plan["partitions"], *fit.entries]}
    report = {**proposal.report, "rf_lowered": {"note": fit.note, "partitions": fit.entries}}
    return engine.Proposal(plan=plan, report=report)
