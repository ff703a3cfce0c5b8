"""`engine.judge`: each goal's judgement of a snapshot as it is, nothing moved, the
same as `propose` reports for its start and end."""

from __future__ import annotations

from apps.balancer.engine import PlannerOptions, judge, propose
from tests.support.factories import apply_plan, broker, part, snapshot


def test_it_judges_the_snapshot_as_propose_does_before_and_after() -> None:
    layout = [1, 1, 1, 1, 1, 2, 2, 3, 3]
    snap = snapshot(
        [broker(b) for b in range(1, 4)], [part("t", i, [b]) for i, b in enumerate(layout)]
    )
    options = PlannerOptions(goals=("replica-distribution", "leader-distribution"))
    proposal = propose(snap, options=options)

    before = judge(snap, options=options)
    after = judge(apply_plan(snap, proposal.plan), options=options)

    by_name = {g["name"]: g for g in proposal.report["goals"]}
    assert [g["name"] for g in before] == [g["name"] for g in proposal.report["goals"]]
    replicas = next(g for g in before if g["name"] == "replica-distribution")
    assert replicas["violated"] and replicas["offenders"][0]["broker"] == 1
    for g in before:
        assert g["violation"] == by_name[g["name"]]["start"]["violation"]
    for g in after:
        assert g["violation"] == by_name[g["name"]]["end"]["violation"]
    assert not any(g["violated"] for g in after)
