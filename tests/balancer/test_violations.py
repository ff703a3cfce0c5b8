"""The engine's judgement of each goal (BALANCING.md §8 `goals[].start/end`): violated
or not, which brokers, which side of the band, the value and the band."""

from __future__ import annotations

import json

import pytest

from apps.balancer.engine import PlannerOptions, propose
from tests.support.factories import MiB, broker, part, snapshot


def goal(report: dict, name: str) -> dict:
    return next(g for g in report["goals"] if g["name"] == name)


def test_it_names_the_broker_and_side_below_the_band() -> None:
    # 4 brokers, 12 partitions RF 1: broker 4 holds 1 replica, the others 3, 4, 4.
    layout = [1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4]
    snap = snapshot(
        [broker(b) for b in range(1, 5)], [part("t", i, [b]) for i, b in enumerate(layout)]
    )
    options = PlannerOptions(goals=("replica-distribution", "leader-distribution"))
    report = propose(snap, options=options).report
    start = goal(report, "replica-distribution")["start"]
    assert start["violated"] and start["offenders_total"] == 3
    worst, *others = start["offenders"]  # the furthest from the band first
    assert worst["broker"] == 4 and worst["side"] == "below"
    assert worst["value"] == 1.0 and worst["band"] == [3.0, 3.0]
    assert worst["ratio"] == 1 / 3 and worst["ratio_of"] == "mean"
    assert worst["text"] == "broker 4 below the band: 0.33 × mean, band 1.00–1.00"
    assert [(o["broker"], o["side"], o["value"]) for o in others] == [
        (2, "above", 4.0),
        (3, "above", 4.0),
    ]
    end = goal(report, "replica-distribution")["end"]
    assert not end["violated"] and end["offenders"] == [] and end["violation"] == 0
    # judged before anything moved, not when its turn came (replica moves fixed it)
    leaders = goal(report, "leader-distribution")
    assert leaders["violation_before"] == 0 and leaders["start"]["offenders_total"] == 3


def test_it_judges_utilisation_against_each_brokers_capacity() -> None:
    # Broker 2 has twice broker 1's capacity and the same load: 1 is above, 2 below.
    brokers = [broker(1, network_in=10 * MiB), broker(2, network_in=20 * MiB)]
    parts = [part("t", 0, [1], bytes_in=MiB), part("t", 1, [2], bytes_in=MiB)]
    report = propose(snapshot(brokers, parts), options=PlannerOptions(goals=())).report
    # hard goals only ran: the distribution goal is not in the report
    assert [g["name"] for g in report["goals"]][-1] == "network-out-capacity"
    report = propose(
        snapshot(brokers, parts), options=PlannerOptions(goals=("network-in-distribution",))
    ).report
    start = goal(report, "network-in-distribution")["start"]
    sides = {o["broker"]: (o["side"], round(o["ratio"], 4)) for o in start["offenders"]}
    # ideal = 2 MiB / 30 MiB; broker 1 at 1/10 is 1.5x, broker 2 at 1/20 is 0.75x
    assert sides == {1: ("above", 1.5), 2: ("below", 0.75)}
    assert [round(x, 6) for x in start["offenders"][0]["band_ratio"]] == [0.9, 1.1]


def test_it_names_the_dead_broker_that_still_holds_replicas() -> None:
    brokers = [broker(1), broker(2), broker(3, alive=False)]
    parts = [part("t", i, [3, 1 + i % 2]) for i in range(4)]
    report = propose(snapshot(brokers, parts)).report
    dead = goal(report, "dead-brokers")
    assert dead["start"]["offenders"][0]["broker"] == 3
    assert dead["start"]["offenders"][0]["text"] == "broker 3 (dead) holds 4 replicas, band up to 0"
    assert dead["end"]["violated"] is False


def test_it_states_capacity_violations_as_a_share_of_capacity() -> None:
    brokers = [broker(1, disk=100.0), broker(2, disk=100.0)]
    parts = [part("t", 0, [1], size=90.0), part("t", 1, [2], size=10.0)]
    report = propose(snapshot(brokers, parts), options=PlannerOptions(goals=())).report
    start = goal(report, "disk-capacity")["start"]
    (o,) = start["offenders"]
    assert (o["broker"], o["side"], o["value"], o["band"]) == (1, "above", 90.0, [None, 80.0])
    assert o["text"] == "broker 1 above the band: 0.90 × capacity, band up to 0.80"
    json.dumps(report)  # judgements are plain JSON (no inf, no numpy types)


def test_it_names_partitions_for_rack_awareness() -> None:
    brokers = [broker(1, "a"), broker(2, "a"), broker(3, "b")]
    report = propose(snapshot(brokers, [part("t", 0, [1, 2])]), options=PlannerOptions(goals=()))
    start = goal(report.report, "rack-awareness")["start"]
    assert start["offenders"][0]["partition"] == "t-0" and start["violation"] == 1
    assert not goal(report.report, "rack-awareness")["end"]["violated"]


def test_it_reports_hard_goals_left_unmet_and_by_how_much() -> None:
    # both brokers are over 80 % of their disk: no plan can bring either under it
    brokers = [broker(1, disk=100.0), broker(2, disk=100.0)]
    parts = [part("t", 0, [1], size=95.0), part("t", 1, [2], size=85.0)]
    report = propose(snapshot(brokers, parts)).report
    (unmet,) = report["unmet_hard_goals"]
    assert unmet["name"] == "disk-capacity" and unmet["offenders"] == 2
    assert unmet["violation_before"] == unmet["violation_after"] == pytest.approx(20.0)
    assert unmet["worst"] == "broker 1 above the band: 0.95 × capacity, band up to 0.80"
    balanced = propose(snapshot(brokers, [part("t", 0, [1], size=10.0)])).report
    assert balanced["unmet_hard_goals"] == []
