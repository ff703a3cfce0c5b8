"""Existing plans' reassignment, rollback and report move to their PlanContent row,
and each plan gets its partition count (migration plans.0008)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.clusters.models import Cluster
from tests.support.migrations import migrated_back_to

BEFORE = [("plans", "0007_plan_estimate_and_bytes_copied")]
AFTER = [("plans", "0008_plan_content_table_and_partition_count")]


@pytest.fixture
def migrated_back(transactional_db, django_db_serialized_rollback):
    yield from migrated_back_to(BEFORE)


def test_it_moves_existing_plans_large_parts_to_their_own_row(migrated_back):
    old = MigrationExecutor(connection).loader.project_state(BEFORE).apps
    # Only plans went back: the clusters table is the current model's.
    cluster = Cluster.objects.create(name="old", bootstrap_servers="127.0.0.1:9")
    reassignment = {
        "version": 1,
        "partitions": [
            {"topic": "orders", "partition": 0, "replicas": [2, 3]},
            {"topic": "orders", "partition": 1, "replicas": [3, 1]},
        ],
    }
    rollback = {"version": 1, "partitions": [{"topic": "orders", "partition": 0}]}
    plan = old.get_model("plans", "Plan").objects.create(
        cluster_id=cluster.pk,
        origin="operator",
        mode="full",
        fingerprint="f" * 64,
        reassignment=reassignment,
        rollback_reassignment=rollback,
        report={"balance": {"replicas": {"before": 1.5, "after": 1.0}}},
    )

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)

    new = executor.loader.project_state(AFTER).apps
    content = new.get_model("plans", "PlanContent").objects.get(plan_id=plan.pk)
    assert content.reassignment == reassignment
    assert content.rollback_reassignment == rollback
    assert content.report == {"balance": {"replicas": {"before": 1.5, "after": 1.0}}}
    assert new.get_model("plans", "Plan").objects.get(pk=plan.pk).partition_count == 2
