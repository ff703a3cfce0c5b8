"""A detection round holds the cluster's detection round lease, not a transaction:
the planner and Kafka run with no transaction open, a round due while one runs is
skipped and counted, and storing the plan re-checks the placement it was planned from."""

import pytest
from django.db import connection

from apps.clusters.models import ClusterRound
from apps.clusters.rounds import round_lease
from apps.plans.models import ClusterPolicy, Plan
from apps.plans.services import cluster_detect
from apps.plans.services import detection as detection_module
from apps.plans.services import planner as planner_module
from tests.plans.conftest import SKEWED
from tests.support.factories import cluster_apply


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_plans_and_reads_kafka_with_no_transaction_open(orders_cluster, monkeypatch):
    seen = []
    real_planner = planner_module.planner_run

    def planner_watched(**kwargs):
        seen.append(("planner", connection.in_atomic_block))
        return real_planner(**kwargs)

    from apps.plans.services import creation as creation_module

    real_sizes = creation_module.partition_sizes_measure

    def sizes_watched(**kwargs):
        seen.append(("log sizes", connection.in_atomic_block))
        return real_sizes(**kwargs)

    monkeypatch.setattr(detection_module, "planner_run", planner_watched)
    monkeypatch.setattr(creation_module, "partition_sizes_measure", sizes_watched)

    plan = cluster_detect(cluster=orders_cluster)

    assert plan is not None
    assert ("planner", False) in seen and ("log sizes", False) in seen
    assert all(not atomic for _, atomic in seen), seen


@pytest.mark.django_db
def test_it_skips_a_round_due_while_another_runs(orders_cluster):
    with round_lease(cluster=orders_cluster, kind=ClusterRound.DETECTION) as lease:
        assert lease is not None
        assert cluster_detect(cluster=orders_cluster) is None
    assert not Plan.objects.exists()
    row = ClusterRound.objects.get(cluster=orders_cluster, kind=ClusterRound.DETECTION)
    assert row.skipped == 1 and row.lease_until is None

    assert cluster_detect(cluster=orders_cluster) is not None  # the lease is free again


@pytest.mark.django_db
def test_it_drops_a_plan_whose_partitions_moved_while_it_was_made(orders_cluster, monkeypatch):
    real_planner = planner_module.planner_run

    def planner_then_a_sync(**kwargs):
        proposal = real_planner(**kwargs)
        # A sync meanwhile: orders-0 was reassigned by someone else.
        cluster_apply(orders_cluster, {**SKEWED, ("orders", 0): [2, 3]})
        return proposal

    monkeypatch.setattr(detection_module, "planner_run", planner_then_a_sync)

    assert cluster_detect(cluster=orders_cluster) is None

    assert not Plan.objects.exists()
    outcome = ClusterPolicy.objects.get(cluster=orders_cluster).last_detection_outcome
    assert outcome.startswith("nothing proposed: the placement of the plan's partitions changed")


@pytest.mark.django_db
def test_a_recheck_finding_a_sync_running_looks_again_shortly(orders_cluster, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    from apps.plans.services import cluster_recheck

    scheduled = []
    monkeypatch.setattr(
        detection_module, "recheck_schedule", lambda cluster_id, at: scheduled.append(at)
    )
    before = timezone.now()
    with round_lease(cluster=orders_cluster, kind=ClusterRound.SYNC) as lease:
        assert lease is not None
        assert cluster_recheck(cluster=orders_cluster) is None

    [at] = scheduled
    assert before + timedelta(seconds=5) <= at <= timezone.now() + timedelta(seconds=5)
    assert not Plan.objects.exists()
