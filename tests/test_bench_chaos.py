"""bench/bench_chaos.py's verdict: a read that failed counts against a web only while
that web was up, and each pass condition that does not hold is named."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

import pytest

from tests.support.bench import bench_module


@pytest.fixture(scope="module")
def chaos():
    return bench_module("bench_chaos")


def passing(chaos):
    return chaos.Figures(
        kills=[],
        events=[],
        acked=100,
        read=100,
        lost=0,
        plans_made=2,
        plans_auto_approved=2,
        plans_ended=2,
        plans_open=[],
        executed_twice=[],
        sent_twice={},
        batches=3,
        resubmitted=0,
        sync_gap=12.0,
        syncs=30,
        takeovers=[7.2],
        requests={8000: 10, 8001: 10},
        failed_up={},
        failed_down={},
        errors=[],
    )


def test_it_counts_a_failed_read_against_a_web_only_while_it_was_up(chaos) -> None:
    requests = [
        (10.0, 8000, False, "refused"),  # within web's kill (at 12 s, 5 s of read timeout)
        (20.0, 8000, False, "refused"),  # before it answered again at 25 s
        (30.0, 8000, False, "timed out"),  # up again: counts
        (20.0, 8001, False, "refused"),  # the other web was never killed: counts
        (21.0, 8001, True, ""),
    ]

    count, failed_up, failed_down = chaos.reads_split(requests, {8000: [(7.0, 25.0)]})

    assert count == {8000: 3, 8001: 2}
    assert failed_down == {8000: 2}
    assert failed_up == {8000: [(30.0, "timed out")], 8001: [(20.0, "refused")]}


def test_it_times_the_takeover_of_a_killed_leading_beat_only(chaos) -> None:
    at = datetime(2026, 11, 28, 12, 0, 0)
    sends = [
        (at - timedelta(seconds=3), "beat"),  # beat leads
        (at + timedelta(seconds=7), "beat-2"),  # the follower took over
        (at + timedelta(seconds=40), "beat-2"),
    ]
    kills = [
        chaos.Kill(at=1.0, name="beat", pid=1, wall=at),
        chaos.Kill(at=2.0, name="beat", pid=2, wall=at + timedelta(seconds=20)),  # following
        chaos.Kill(at=3.0, name="worker", pid=3, wall=at + timedelta(seconds=30)),
    ]

    assert chaos.beat_takeovers(kills, sends) == [7.0]


def test_it_passes_when_every_condition_holds(chaos) -> None:
    assert passing(chaos).failures() == []


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"lost": 1}, "acked records lost"),
        ({"acked": 0}, "acked records lost"),
        ({"plans_made": 0}, "no plan was made"),
        ({"plans_open": [(3, "executing")]}, "did not end"),
        ({"executed_twice": [3]}, "executed twice"),
        ({"sent_twice": {"3": ["t-1"]}}, "sent twice"),
        ({"sync_gap": 20.5}, "sync gap"),
        ({"takeovers": [7.2, 10.5]}, "leading beat"),
        ({"failed_up": {8001: [(20.0, "refused")]}}, "while it was up"),
        ({"errors": ["chaos loop: boom"]}, "chaos loop"),
    ],
)
def test_it_names_each_condition_that_fails(chaos, change, named) -> None:
    failures = dataclasses.replace(passing(chaos), **change).failures()

    assert len(failures) == 1 and named in failures[0]
