"""An open proposal holds still while the cluster it was made for is unchanged: new
load windows do not replace it; a changed cluster, or a better plan once it has been
open long enough, does, and says why. A refused approval on a replaced plan names the
plan to review instead, and an episode of proposals is announced once."""

from datetime import timedelta

import pytest
from devkit.users import user_make
from django.test import Client
from rest_framework.test import APIClient

from apps.audit.models import AuditEvent
from apps.notifications.events import event_from_audit
from apps.plans.errors import PlanReplaced
from apps.plans.models import ClusterPolicy, Plan, PlanMode, PlanOrigin, PlanState
from apps.plans.services import cluster_detect, plan_approve, plan_request, policy_get
from tests.plans.conftest import SKEWED
from tests.plans.windows import PLACEMENT, slid_windows
from tests.support.factories import cluster_apply

pytestmark = pytest.mark.django_db


@pytest.fixture
def windows(settings, orders_cluster):
    """window(n, hot_broker=b, hot=partitions): the n-th window, then detection."""

    def bytes_in(index: int, replicas: list[int], *, hot_broker: int = 0, hot=frozenset()):
        # The partitions led by `hot_broker`, or those in `hot`, write 30 % more.
        hotter = replicas[0] == hot_broker or ("orders", index) in hot
        return (1300.0 if hotter else 1000.0) + index

    return slid_windows(settings, orders_cluster, bytes_in)


def aged(plan: Plan, seconds: float) -> None:
    """As if `plan` had been proposed `seconds` earlier."""
    Plan.objects.filter(pk=plan.pk).update(created_at=plan.created_at - timedelta(seconds=seconds))


def hot_where_it_leads(plan: Plan) -> frozenset:
    """The partitions on the broker that leads the most partitions once `plan` ran:
    on today's loads the open plan leaves that broker hot, a new plan would not."""
    after = {k: list(r) for k, r in PLACEMENT.items()}
    for e in plan.reassignment["partitions"]:
        after[(e["topic"], e["partition"])] = e["replicas"]
    counts: dict[int, int] = {}
    for replicas in after.values():
        counts[replicas[0]] = counts.get(replicas[0], 0) + 1
    busiest = max(counts, key=lambda b: (counts[b], b))
    return frozenset(k for k, r in after.items() if r[0] == busiest)


def proposed_with_broker_1_hot(windows) -> Plan:
    windows(0, hot_broker=1)
    plan = windows(1, hot_broker=1)  # the next slide confirms it
    assert plan is not None and "network-in-distribution" in plan.trigger
    return plan


def test_it_keeps_the_open_proposal_while_new_windows_would_plan_otherwise(
    windows, orders_cluster, settings
):
    settings.PLAN_PROPOSAL_HOLD_SECONDS = 600
    first = proposed_with_broker_1_hot(windows)

    # The skew moves where the open plan puts most leaders: every window from now on
    # would make another plan.
    hot = hot_where_it_leads(first)
    for n in range(2, 8):
        assert windows(n, hot=hot) == first

    first.refresh_from_db()
    assert first.state == PlanState.PROPOSED
    assert Plan.objects.filter(cluster=orders_cluster).count() == 1
    outcome = ClusterPolicy.objects.get(cluster=orders_cluster).last_detection_outcome
    assert outcome.startswith(f"kept plan #{first.pk}: open ")
    assert "held 600 s while the cluster is unchanged" in outcome


def test_it_replaces_it_after_the_hold_by_a_better_plan_and_says_why(
    windows, orders_cluster, settings
):
    settings.PLAN_PROPOSAL_HOLD_SECONDS = 60
    first = proposed_with_broker_1_hot(windows)
    aged(first, 61)
    hot = hot_where_it_leads(first)

    windows(2, hot=hot)
    second = windows(3, hot=hot)

    assert second is not None and second.pk != first.pk
    first.refresh_from_db()
    assert first.state == PlanState.SUPERSEDED and first.superseded_by_id == second.pk
    reason = AuditEvent.objects.get(action="plan.superseded", object_id=str(first.pk)).reason
    assert reason.startswith(f"superseded by plan #{second.pk}: a better plan than #{first.pk}: ")
    assert "network-in-distribution violation" in reason


def test_it_keeps_it_after_the_hold_when_the_new_plan_is_no_better(
    windows, orders_cluster, settings
):
    settings.PLAN_PROPOSAL_HOLD_SECONDS = 60
    first = proposed_with_broker_1_hot(windows)

    # Still broker 1, a little hotter: the open plan mends it as well as a new one would.
    aged(first, 61)
    windows(2, hot_broker=1)
    assert windows(3, hot_broker=1) == first

    outcome = ClusterPolicy.objects.get(cluster=orders_cluster).last_detection_outcome
    assert outcome == f"kept plan #{first.pk}: a new plan is not better by 10% on today's loads"


def test_it_keeps_it_while_a_broker_restarts_within_its_grace(windows, orders_cluster, settings):
    settings.PLAN_PROPOSAL_HOLD_SECONDS = 600
    first = proposed_with_broker_1_hot(windows)

    cluster_apply(orders_cluster, PLACEMENT, alive=(1, 2))  # broker 3 stops: 60 s of grace
    assert cluster_detect(cluster=orders_cluster) == first
    cluster_apply(orders_cluster, PLACEMENT)  # and is back
    assert cluster_detect(cluster=orders_cluster) == first

    first.refresh_from_db()
    assert first.state == PlanState.PROPOSED
    assert Plan.objects.filter(cluster=orders_cluster).count() == 1


def test_it_replaces_it_at_once_when_a_broker_dies_and_the_grace_ends(orders_cluster):
    # The `cluster` fixture: 6 partitions of RF 2 on brokers 1 and 2; broker 3 is empty.
    policy = policy_get(cluster=orders_cluster)
    ClusterPolicy.objects.filter(pk=policy.pk).update(dead_broker_grace=0)
    first = cluster_detect(cluster=orders_cluster)
    assert first is not None and first.mode == PlanMode.ADD_BROKERS

    cluster_apply(orders_cluster, SKEWED, alive=(1, 3))
    healing = cluster_detect(cluster=orders_cluster)

    assert healing is not None and healing.mode == PlanMode.FIX_OFFLINE
    first.refresh_from_db()
    assert first.state == PlanState.SUPERSEDED
    reason = AuditEvent.objects.get(action="plan.superseded", object_id=str(first.pk)).reason
    assert reason == (
        f"superseded by plan #{healing.pk}: the cluster changed since it was proposed: "
        "broker 2 died"
    )


def test_it_marks_it_stale_when_the_policy_changed_and_nothing_is_needed(windows, orders_cluster):
    first = proposed_with_broker_1_hot(windows)
    policy = policy_get(cluster=orders_cluster)
    policy.balance_threshold = 2.0
    policy.save()

    assert cluster_detect(cluster=orders_cluster) is None

    first.refresh_from_db()
    assert first.state == PlanState.STALE
    reason = AuditEvent.objects.get(action="plan.stale", object_id=str(first.pk)).reason
    assert reason == "the cluster changed since it was proposed: the cluster policy changed"


def test_it_leaves_a_plan_an_operator_requested_to_the_operator(windows, orders_cluster, settings):
    settings.PLAN_PROPOSAL_HOLD_SECONDS = 0
    windows(0, hot_broker=2)
    requested = plan_request(
        cluster=orders_cluster, user=user_make("olga", "operator"), mode="full"
    )
    assert requested.origin == PlanOrigin.OPERATOR

    assert windows(1, hot_broker=2) == requested

    assert Plan.objects.filter(cluster=orders_cluster).count() == 1
    outcome = ClusterPolicy.objects.get(cluster=orders_cluster).last_detection_outcome
    assert outcome == f"kept plan #{requested.pk}: an operator requested it"


def test_a_refused_approval_names_the_plan_that_replaced_it(windows, orders_cluster, settings):
    settings.PLAN_PROPOSAL_HOLD_SECONDS = 60
    first = proposed_with_broker_1_hot(windows)
    aged(first, 61)
    hot = hot_where_it_leads(first)
    windows(2, hot=hot)
    second = windows(3, hot=hot)
    first.refresh_from_db()
    anna = user_make("anna", "approver")

    with pytest.raises(PlanReplaced) as refused:
        plan_approve(plan=first, user=anna)
    assert refused.value.newer_plan_id == second.pk
    assert f"review plan #{second.pk} instead" in str(refused.value)
    assert "a better plan than" in str(refused.value)

    api = APIClient()
    api.force_login(anna)
    answer = api.post(f"/api/plans/{first.pk}/approve/", {}, format="json")
    assert answer.status_code == 409
    assert answer.json()["newer_plan"] == {"id": second.pk, "url": f"/api/plans/{second.pk}/"}
    first.refresh_from_db()
    assert first.state == PlanState.SUPERSEDED

    page = Client()
    page.force_login(anna)
    html = page.get(f"/clusters/{orders_cluster.name}/plans/{first.pk}/").content.decode()
    assert 'id="plan-replaced"' in html
    assert f'href="/clusters/{orders_cluster.name}/plans/{second.pk}/"' in html

    # The cluster page lists the open proposal, not the one it replaced, and says why.
    html = page.get(f"/clusters/{orders_cluster.name}/").content.decode()
    assert f'data-plan="{second.pk}"' in html and f'data-plan="{first.pk}"' not in html
    assert "1 superseded proposal not listed" in html
    assert f"proposed plan #{second.pk} (a better plan than #{first.pk}" in html


def test_an_episode_of_proposals_is_announced_once(windows, orders_cluster, settings):
    settings.PLAN_PROPOSAL_HOLD_SECONDS = 60
    first = proposed_with_broker_1_hot(windows)
    aged(first, 61)
    hot = hot_where_it_leads(first)
    windows(2, hot=hot)
    second = windows(3, hot=hot)

    proposed = AuditEvent.objects.filter(action="plan.proposed").order_by("pk")
    announced = [event_from_audit(audit=a) for a in proposed]
    assert [a.object_id for a in proposed] == [str(first.pk), str(second.pk)]
    assert announced[0] is not None and announced[1] is None
