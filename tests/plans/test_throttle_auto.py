"""The adaptive throttle against an in-memory Kafka: a run starts low, each canary round
within the objective doubles the rate until the first round outside it (which halves
it, never under the floor) and adds a step after that, up to the approver's ceiling;
the executor's next step writes the new rate to the brokers, every change is audited
with its reason, an under-replicated partition outside the plan breaks the objective as
a slow canary does, and an operator's own throttle ends it."""

import pytest

from apps.audit.models import AuditEvent
from apps.canary.band_updates import BrokerJudgement
from apps.canary.throttle_feedback import canary_verdict
from apps.plans.executor import execution_step
from apps.plans.models import Execution, Plan
from apps.plans.services import plan_approve
from apps.plans.services.execution_control import execution_tune
from apps.plans.services.throttle_auto import (
    ThrottleVerdict,
    executions_throttle_adapt,
    throttle_auto_next,
)
from tests.plans.fakes import FakeKafka
from tests.support.factories import cluster_apply, plan_from_assignment, policy_set

pytestmark = pytest.mark.django_db

BEFORE = {("t", i): [1, 2] if i % 2 else [2, 1] for i in range(12)}
AFTER = {("t", i): [3, 1] if i % 2 else [3, 2] for i in range(12)}
MET = ThrottleVerdict(met=True, reason="every broker's canary p99 in its band")
BROKEN = ThrottleVerdict(met=False, reason="broker 2 p99 140 ms > 50 ms")


@pytest.fixture(autouse=True)
def _steps(settings) -> None:
    settings.THROTTLE_AUTO_START = 4_000_000
    settings.THROTTLE_AUTO_STEP = 2_000_000
    settings.THROTTLE_AUTO_MIN = 1_500_000


@pytest.fixture
def kafka() -> FakeKafka:
    return FakeKafka(
        assignment={k: list(v) for k, v in BEFORE.items()},
        sizes={k: 1000 for k in BEFORE},
        ticks=50,
    )


@pytest.fixture
def plan(orders_cluster, admin_member) -> Plan:
    cluster_apply(orders_cluster, BEFORE)
    policy_set(orders_cluster, admin_member, throttle_bytes_per_sec=9_000_000, throttle_auto=True)
    plan = plan_from_assignment(orders_cluster, AFTER, BEFORE, actor=admin_member)
    plan_approve(plan=plan, user=admin_member)
    return plan


def _rate_written(kafka: FakeKafka) -> str:
    brokers, _ = kafka.config_writes[-1]
    return brokers[3]["leader.replication.throttled.rate"]


def test_it_steps_up_to_the_ceiling_and_halves_down_to_the_floor(settings) -> None:
    def step(rate: int, met: bool, doubling: bool = False) -> int:
        return throttle_auto_next(rate=rate, ceiling=9_000_000, met=met, doubling=doubling)

    assert step(3_000_000, True, doubling=True) == 6_000_000
    assert step(6_000_000, True, doubling=True) == 9_000_000
    assert step(4_000_000, True) == 6_000_000
    assert step(8_000_000, True) == 9_000_000
    assert step(8_000_000, False) == 4_000_000
    assert step(2_000_000, False) == 1_500_000


def test_it_judges_a_round_by_its_failed_writes_first_then_its_slowest_broker() -> None:
    ok = BrokerJudgement(broker_id=1, sent=10, acked=10, p99_ms=20.0, top_ms=50.0)
    slow = BrokerJudgement(broker_id=2, sent=10, acked=10, p99_ms=140.0, top_ms=50.0)
    lost = BrokerJudgement(broker_id=3, sent=10, acked=7, p99_ms=9.0, top_ms=50.0)

    first = BrokerJudgement(broker_id=1, sent=10, acked=10, p99_ms=90.0, top_ms=None)
    assert canary_verdict(judged=[]) is None
    assert canary_verdict(judged=[first]) is None  # no band yet: nothing to judge by
    assert canary_verdict(judged=[first, ok]).met
    assert canary_verdict(judged=[ok]).met
    assert canary_verdict(judged=[ok, slow]) == ThrottleVerdict(
        met=False, reason="broker 2 p99 140 ms > 50 ms"
    )
    assert canary_verdict(judged=[ok, slow, lost]).reason == (
        "broker 3: 3 of 10 canary writes failed"
    )


def test_it_starts_low_and_follows_the_canary_within_the_ceiling(plan, kafka) -> None:
    execution_step(plan=plan, kafka=kafka)
    execution = Execution.objects.get(plan=plan)
    assert execution.throttle_auto and execution.throttle_rate == 4_000_000
    assert _rate_written(kafka) == "4000000"

    executions_throttle_adapt(cluster=plan.cluster, verdict=MET)
    executions_throttle_adapt(cluster=plan.cluster, verdict=MET)
    execution.refresh_from_db()
    assert execution.throttle_rate == 9_000_000  # 4 -> 8 -> 9 (the ceiling)
    execution_step(plan=plan, kafka=kafka)
    assert _rate_written(kafka) == "9000000"

    executions_throttle_adapt(cluster=plan.cluster, verdict=BROKEN)  # one round: held
    execution.refresh_from_db()
    assert execution.throttle_rate == 9_000_000 and execution.throttle_auto_misses == 1
    executions_throttle_adapt(cluster=plan.cluster, verdict=BROKEN)  # the second: halved
    execution_step(plan=plan, kafka=kafka)
    assert _rate_written(kafka) == "4500000"
    executions_throttle_adapt(cluster=plan.cluster, verdict=MET)  # a step, no doubling
    execution_step(plan=plan, kafka=kafka)
    assert _rate_written(kafka) == "6500000"

    reasons = list(
        AuditEvent.objects.filter(action="execution.throttle_adapted")
        .order_by("id")
        .values_list("reason", flat=True)
    )
    assert reasons == [
        "started at 4.0 MB/s (auto, ceiling 9.0 MB/s)",
        "raised to 8.0 MB/s: every broker's canary p99 in its band",
        "raised to 9.0 MB/s: every broker's canary p99 in its band",
        "lowered to 4.5 MB/s: broker 2 p99 140 ms > 50 ms",
        "raised to 6.5 MB/s: every broker's canary p99 in its band",
    ]


def test_it_halves_at_once_when_canary_writes_failed(plan, kafka) -> None:
    execution_step(plan=plan, kafka=kafka)
    failed = ThrottleVerdict(
        met=False, reason="broker 3: 4 of 10 canary writes failed", urgent=True
    )

    executions_throttle_adapt(cluster=plan.cluster, verdict=failed)

    assert Execution.objects.get(plan=plan).throttle_rate == 2_000_000


def test_it_forgets_a_slow_round_followed_by_a_good_one(plan, kafka) -> None:
    execution_step(plan=plan, kafka=kafka)
    for verdict in (BROKEN, MET, BROKEN, MET):
        executions_throttle_adapt(cluster=plan.cluster, verdict=verdict)

    execution = Execution.objects.get(plan=plan)
    assert execution.throttle_rate == 9_000_000 and execution.throttle_auto_misses == 0


def test_it_stops_adapting_once_an_operator_sets_a_throttle(plan, kafka, admin_member) -> None:
    execution_step(plan=plan, kafka=kafka)

    execution_tune(plan=plan, user=admin_member, throttle_rate=3_000_000)
    executions_throttle_adapt(cluster=plan.cluster, verdict=MET)

    execution = Execution.objects.get(plan=plan)
    assert not execution.throttle_auto and execution.throttle_rate == 3_000_000
    tuned = AuditEvent.objects.filter(action="execution.tuned").latest("id")
    assert tuned.after["throttle_auto"] is False


def test_it_leaves_a_run_without_auto_alone(plan, kafka, orders_cluster, admin_member) -> None:
    policy_set(orders_cluster, admin_member, throttle_auto=False)
    execution_step(plan=plan, kafka=kafka)

    assert executions_throttle_adapt(cluster=plan.cluster, verdict=BROKEN) == []
    assert Execution.objects.get(plan=plan).throttle_rate is None


def test_it_backs_off_when_partitions_outside_the_plan_fall_under_replicated(
    plan, kafka, orders_cluster
) -> None:
    with_u = {**BEFORE, ("u", 0): [1, 2]}
    cluster_apply(orders_cluster, with_u)
    execution_step(plan=plan, kafka=kafka)
    assert Execution.objects.get(plan=plan).throttle_auto_under_replicated == 0
    # a partition the plan does not move loses an in-sync replica
    cluster_apply(orders_cluster, with_u, isr={("u", 0): [1]})

    for _ in range(2):
        executions_throttle_adapt(cluster=plan.cluster, verdict=MET)

    execution = Execution.objects.get(plan=plan)
    assert execution.throttle_rate == 2_000_000
    lowered = AuditEvent.objects.filter(action="execution.throttle_adapted").latest("id")
    assert lowered.reason == (
        "lowered to 2.0 MB/s: 1 partition(s) outside the plan under-replicated (0 at its start)"
    )
