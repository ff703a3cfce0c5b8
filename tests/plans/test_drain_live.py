"""A drain on the real 3-broker dev cluster stays drained.

The balancer's own metrics topic exists as in a real run (created by the sampler's
metrics_topic_ensure: RF min(3, brokers) = 3). Broker 3 is drained with a
remove-brokers plan, the metrics topic in the policy's scope (nothing is excluded;
the scope lists this test's topic and the metrics topic only so other tests' topics
on the shared cluster are left alone): the plan is accepted, run, and broker 3 ends
holding no replica of either topic (the metrics topic's RF lowered to the 2 brokers
left). Detection then runs a few rounds and proposes nothing that moves data back;
undrained, broker 3 is an ordinary empty broker again and detection fills it. The
metrics topic's placement is restored at the end (other tests share the cluster).
"""

import pytest
from devkit import live
from devkit.polling import wait_until
from django.conf import settings

from apps.clusters.services import cluster_sync
from apps.kafka_layer.metrics_topic import metrics_topic_ensure
from apps.plans.executor import execution_run
from apps.plans.kafka_ops import LiveKafka
from apps.plans.models import BrokerDrain, Plan, PlanMode, PlanState
from apps.plans.services import broker_undrain, cluster_detect, plan_approve, plan_request

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

METRICS = settings.METRICS_TOPIC


def test_a_drained_broker_stays_empty_until_undrained(
    kafka_cluster, admin, topics, admin_user, operator, approver
):
    topic = live.topic_name("drain")
    topics.append(topic)
    live.topic_create(admin, topic, partitions=6, rf=2)
    live.fill(kafka_cluster.bootstrap_servers, topic, 6, 64 * 1024)
    existing = set(admin.list_topics(timeout=10).topics)
    metrics_topic_ensure(admin=admin, topic=METRICS, existing=existing, brokers=3)
    metrics_before = {
        k: replicas for k, (replicas, _, _) in live.placement(admin, [METRICS]).items()
    }
    # As a real run creates it on 3 brokers: some partition can't keep its RF on 2.
    assert any(len(r) == 3 for r in metrics_before.values()), metrics_before
    assert any(3 in r for (t, _), (r, _, _) in live.placement(admin, [topic]).items())

    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers,
        admin_user,
        [topic, METRICS],
        throttle_bytes_per_sec=50_000_000,
    )
    kafka = LiveKafka(connection=cluster.connection)
    try:
        plan = plan_request(
            cluster=cluster, user=operator, mode=PlanMode.REMOVE_BROKERS, brokers=[3]
        )
        assert "replication factor lowered from 3 to 2" in plan.report["rf_lowered"]["note"]
        plan_approve(plan=plan, user=approver, reason="decommission broker 3")
        plan = execution_run(plan=plan, poll_interval=0.5, max_seconds=180)
        assert plan.state == PlanState.COMPLETED, plan.error
        drain = BrokerDrain.objects.get(cluster=cluster, node_id=3)
        assert drain.plan_id == plan.pk and drain.drained_by == operator

        after = live.placement(admin, [topic, METRICS])
        for key, (replicas, _, _) in after.items():
            assert 3 not in replicas, (key, replicas)
            assert len(replicas) == 2, (key, replicas)
        live.no_throttles_left(admin, [topic, METRICS])

        # Rounds of the periodic balancer (sync, then detect): nothing moves back.
        for _ in range(3):
            assert cluster_sync(cluster=cluster), cluster.last_sync_error
            proposed = cluster_detect(cluster=cluster)
            assert proposed is None or all(
                3 not in m.replicas_after for m in proposed.moves.all()
            ), proposed.trigger
        assert not Plan.objects.filter(cluster=cluster, mode=PlanMode.ADD_BROKERS).exists()
        assert all(3 not in r for r, _, _ in live.placement(admin, [topic, METRICS]).values())

        # Undrained, broker 3 is an ordinary empty broker: detection fills it.
        broker_undrain(cluster=cluster, node_id=3, user=operator, reason="back in service")

        def refilled():
            assert cluster_sync(cluster=cluster), cluster.last_sync_error
            return cluster_detect(cluster=cluster)

        plan = wait_until(refilled, 30, 1, what="a plan filling broker 3")
        assert plan.mode == PlanMode.ADD_BROKERS and plan.brokers == [3], plan.trigger
    finally:
        # The metrics topic as it was (its RF back to 3), for the tests that follow.
        kafka.reassignments_alter(dict(metrics_before))

        def restored() -> bool:
            now = live.placement(admin, [METRICS])
            return all(now[k][0] == r for k, r in metrics_before.items())

        wait_until(restored, 60, 0.5, what="the metrics topic's placement restored")
