"""The plan every broker and controller fault strikes: 4 partitions moving onto broker
3, throttled to 1 MB/s so they are still copying when the fault comes; 2 more
partitions already have a replica on broker 3."""

from devkit import live
from devkit.polling import wait_until

from apps.plans.executor import execution_step
from apps.plans.models import MoveState
from apps.plans.services import plan_approve
from tests.support.factories import plan_from_assignment

# p0-p3 on brokers 1 and 2 (the plan moves them onto 3); p4, p5 already on broker 3.
PLACEMENT = [[1, 2], [2, 1], [1, 2], [2, 1], [1, 3], [2, 3]]
TARGETS = {0: [3, 1], 1: [3, 2], 2: [3, 1], 3: [3, 2]}
GRACE = 5  # the policy's dead-broker grace before self-healing is proposed


def plan_onto_broker_3(kafka_cluster, admin, topics, admin_user, targets=TARGETS):
    """A topic with some data, its cluster registered, and an approved plan moving
    p0-p3 onto broker 3 at 1 MB/s, with self-healing auto-approved."""
    topic = live.topic_name("fault")
    topics.append(topic)
    live.topic_create(admin, topic, assignment=PLACEMENT)
    live.fill(kafka_cluster.bootstrap_servers, topic, 4, 3 * 1024 * 1024)
    cluster = live.cluster_registered(
        kafka_cluster.bootstrap_servers,
        admin_user,
        [topic],
        throttle_bytes_per_sec=1_000_000,
        dead_broker_grace=GRACE,
        auto_approve_self_healing=True,
        four_eyes=False,  # one admin requests and approves
    )
    plan = plan_from_assignment(
        cluster,
        {(topic, p): r for p, r in targets.items()},
        {(topic, p): r for p, r in enumerate(PLACEMENT)},
        actor=admin_user,
    )
    plan_approve(plan=plan, user=admin_user)
    return topic, cluster, plan


def step_until_copying(plan) -> None:
    """Step the plan until Kafka has its moves in flight and bytes are arriving."""

    def copying() -> bool:
        execution_step(plan=plan)
        return plan.moves.filter(state=MoveState.IN_PROGRESS, bytes_done__gt=0).exists()

    wait_until(copying, 60, 0.5, what="the moves copying")
