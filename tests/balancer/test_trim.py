"""The final movement pass gives back moves no goal needs (BALANCING.md §5)."""

from __future__ import annotations

from unittest import mock

from apps.balancer.engine import PlannerOptions, optimizer, propose
from tests.balancer.test_bench import bench


def test_it_gives_back_moves_and_bytes_without_changing_balance() -> None:
    snap = bench().make_cluster(20, 2_000)
    options = PlannerOptions()
    with mock.patch.object(optimizer, "polish", lambda model, goals: 0):  # test_polish.py
        pr = propose(snap, options=options)
        with mock.patch.object(optimizer, "trim", lambda model: 0):
            untrimmed = propose(snap, options=options)
    moved, was = pr.report["movement"], untrimmed.report["movement"]
    assert moved["given_back"] > 0
    assert moved["replica_moves"] == was["replica_moves"] - moved["given_back"]
    assert moved["bytes_moved"] < was["bytes_moved"]
    for name, fig in pr.report["balance"].items():
        was_fig = untrimmed.report["balance"][name]
        assert fig["after"] <= was_fig["after"] + 1e-9, name
        assert fig["min_after"] >= was_fig["min_after"] - 1e-9, name
    # the goals behind each change are still those that made it, never the pass
    assert all("movement-trim" not in m["goals"] and m["goals"] for m in pr.report["moves"])
    with mock.patch.object(optimizer, "polish", lambda model, goals: 0):
        assert propose(snap, options=options).plan == pr.plan  # deterministic
