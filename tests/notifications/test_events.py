"""Which audit events and sync changes become notifications, for which channels, and
that a notification problem never fails the change it reports."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.audit.services import actor_system, audit_record
from apps.canary.band import WARMUP_ROUNDS
from apps.canary.band_updates import canary_bands_update
from apps.canary.models import CanaryWindow
from apps.clusters.models import Cluster
from apps.clusters.services import cluster_state_apply, cluster_sync, cluster_sync_error_record
from apps.clusters.sync_outcome import SyncOutcome
from apps.kafka_layer.cluster_state import BrokerState, ClusterState
from apps.notifications.models import ChannelKind, Delivery, EventKind, NotificationChannel
from apps.plans.models import PlanState
from apps.plans.services import (
    execution_pause,
    execution_resume,
    execution_tune,
    plan_reject,
)
from apps.plans.services.plan_audit import plan_audit_record
from tests.notifications.conftest import SECRET
from tests.support.factories import plan_row_make

pytestmark = pytest.mark.django_db
EXECUTOR = actor_system(name="executor")


def events_sent(channel: NotificationChannel) -> list[str]:
    return list(channel.deliveries.order_by("id").values_list("event", flat=True))


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ("plan.proposed", EventKind.PLAN_PROPOSED),
        ("plan.approved", EventKind.PLAN_APPROVED),
        ("plan.rejected", EventKind.PLAN_REJECTED),
        ("execution.started", EventKind.EXECUTION_STARTED),
        ("execution.completed", EventKind.EXECUTION_COMPLETED),
        ("execution.failed", EventKind.EXECUTION_FAILED),
        ("execution.cancelled", EventKind.EXECUTION_CANCELLED),
        ("plan.cancelled", EventKind.EXECUTION_CANCELLED),
        ("execution.paused", EventKind.EXECUTION_PAUSED),
        ("execution.resumed", EventKind.EXECUTION_RESUMED),
        ("execution.tuned", EventKind.EXECUTION_TUNED),
    ],
)
def test_it_maps_plan_audit_events_to_notifications(empty_cluster, webhook, action, kind):
    plan = plan_row_make(empty_cluster)

    plan_audit_record(plan=plan, actor=EXECUTOR, action=action)

    [delivery] = webhook.deliveries.all()
    assert delivery.event == kind
    assert delivery.payload["data"]["plan"]["id"] == plan.pk
    assert delivery.payload["cluster"] == {"id": empty_cluster.pk, "name": "prod"}


@pytest.mark.parametrize(
    "action", ["execution.batch_submitted", "plan.superseded", "plan.stale", "policy.changed"]
)
def test_it_ignores_audit_events_that_are_no_notification(empty_cluster, webhook, action):
    plan_audit_record(plan=plan_row_make(empty_cluster), actor=EXECUTOR, action=action)

    assert events_sent(webhook) == []


def test_it_ignores_an_audit_row_the_plans_app_did_not_announce(empty_cluster, webhook):
    audit_record(actor=EXECUTOR, action="plan.approved", obj=plan_row_make(empty_cluster))

    assert events_sent(webhook) == []


def test_it_says_what_was_proposed_and_why(empty_cluster, webhook):
    plan = plan_row_make(empty_cluster)

    plan_audit_record(plan=plan, actor=EXECUTOR, action="plan.proposed")

    summary = webhook.deliveries.get().payload["summary"]
    assert summary == (
        f"[prod] Plan #{plan.pk} (self-healing (dead brokers)) proposed: 1 partition(s), "
        "1.5 GiB to move. Why: broker 3 dead for 61 s"
    )


def test_it_notifies_a_rejection_made_through_the_plan_service(empty_cluster, webhook, approver):
    plan = plan_row_make(empty_cluster)

    plan_reject(plan=plan, user=approver, reason="not during the sale")

    delivery = webhook.deliveries.get()
    assert delivery.event == EventKind.PLAN_REJECTED
    assert delivery.payload["summary"].endswith("rejected by anna: not during the sale")
    assert delivery.payload["data"]["plan"]["state"] == PlanState.REJECTED


def test_it_notifies_pause_resume_and_changes_made_on_a_running_execution(
    empty_cluster, webhook, approver
):
    plan = plan_row_make(empty_cluster, state=PlanState.EXECUTING)

    execution_pause(plan=plan, user=approver, reason="peak hour")
    execution_tune(plan=plan, user=approver, throttle_rate=1024**2, max_moves_per_broker=2)
    execution_resume(plan=plan, user=approver)

    deliveries = list(webhook.deliveries.order_by("id"))
    assert [d.event for d in deliveries] == [
        EventKind.EXECUTION_PAUSED,
        EventKind.EXECUTION_TUNED,
        EventKind.EXECUTION_RESUMED,
    ]
    what = f"[prod] Plan #{plan.pk} (self-healing (dead brokers)) execution"
    assert [d.payload["summary"] for d in deliveries] == [
        f"{what} paused by anna: peak hour (moves in flight finish, no new ones start)",
        f"{what} changed by anna: throttle 47.7 MiB/s → 1.0 MiB/s, moves per broker 5 → 2",
        f"{what} resumed by anna",
    ]
    assert deliveries[1].payload["data"]["changes"] == {
        "throttle_rate": {"before": 50_000_000, "after": 1024**2},
        "max_moves_per_broker": {"before": 5, "after": 2},
    }
    assert "changes" not in deliveries[0].payload["data"]


def test_it_links_to_the_plan_page_when_the_site_address_is_set(empty_cluster, webhook, settings):
    settings.NOTIFICATIONS_BASE_URL = "https://balancer.example.com/"
    plan = plan_row_make(empty_cluster)

    plan_audit_record(plan=plan, actor=EXECUTOR, action="plan.approved")

    url = webhook.deliveries.get().payload["url"]
    assert url == f"https://balancer.example.com/clusters/prod/plans/{plan.pk}/"


def test_it_sends_a_channel_only_the_events_it_chose(empty_cluster, receiver):
    chosen = NotificationChannel.objects.create(
        cluster=empty_cluster,
        name="approvals",
        kind=ChannelKind.SLACK,
        url=receiver.url(),
        all_events=False,
        events=[EventKind.PLAN_PROPOSED],
    )
    off = NotificationChannel.objects.create(
        cluster=empty_cluster, name="off", kind=ChannelKind.SLACK, url=receiver.url(), enabled=False
    )
    other = Cluster.objects.create(name="other", bootstrap_servers="127.0.0.1:2")
    elsewhere = NotificationChannel.objects.create(
        cluster=other, name="all", kind=ChannelKind.WEBHOOK, url=receiver.url(), secret=SECRET
    )
    plan = plan_row_make(empty_cluster)

    for action in ("plan.proposed", "plan.approved", "execution.started"):
        plan_audit_record(plan=plan, actor=EXECUTOR, action=action)

    assert events_sent(chosen) == [EventKind.PLAN_PROPOSED]
    assert events_sent(off) == []
    assert events_sent(elsewhere) == []


def test_it_gives_every_channel_the_same_event_id(empty_cluster, webhook, slack):
    plan_audit_record(plan=plan_row_make(empty_cluster), actor=EXECUTOR, action="plan.approved")

    ids = {d.payload["id"] for d in Delivery.objects.all()}
    assert Delivery.objects.count() == 2 and len(ids) == 1


def test_it_queues_deliveries_only_after_commit(
    empty_cluster, webhook, slack, monkeypatch, django_capture_on_commit_callbacks
):
    queued = []
    monkeypatch.setattr(
        "apps.notifications.tasks.delivery_send_task.delay", lambda pk: queued.append(pk)
    )

    with django_capture_on_commit_callbacks(execute=True):
        plan_audit_record(plan=plan_row_make(empty_cluster), actor=EXECUTOR, action="plan.proposed")
        assert queued == []

    assert len(queued) == 2
    assert sorted(queued) == sorted(Delivery.objects.values_list("pk", flat=True))


def test_a_notification_failure_never_fails_the_change(
    empty_cluster, webhook, approver, monkeypatch
):
    def broken(**kwargs):
        raise RuntimeError("notifications are broken")

    monkeypatch.setattr("apps.notifications.receivers.notifications_dispatch", broken)
    plan = plan_row_make(empty_cluster)

    plan_reject(plan=plan, user=approver, reason="no")

    plan.refresh_from_db()
    assert plan.state == PlanState.REJECTED
    assert AuditEvent.objects.filter(action="plan.rejected").count() == 1
    assert events_sent(webhook) == []


# --- brokers and reachability, from the sync ---------------------------------------------------


def state(*brokers: int) -> ClusterState:
    return ClusterState(
        cluster_id="abc",
        controller_id=1,
        brokers=[
            BrokerState(node_id=b, host="127.0.0.1", port=9000 + b, rack=None) for b in brokers
        ],
    )


def test_it_notifies_a_broker_dying_and_coming_back_once_each(empty_cluster, webhook):
    cluster_state_apply(cluster=empty_cluster, state=state(1, 2, 3), now=timezone.now())
    assert events_sent(webhook) == []

    cluster_state_apply(cluster=empty_cluster, state=state(1, 2), now=timezone.now())
    cluster_state_apply(cluster=empty_cluster, state=state(1, 2), now=timezone.now())
    cluster_state_apply(cluster=empty_cluster, state=state(1, 2, 3), now=timezone.now())

    assert events_sent(webhook) == [EventKind.BROKER_DEAD, EventKind.BROKER_BACK]
    dead, back = webhook.deliveries.order_by("id")
    assert dead.payload["summary"].startswith("[prod] Broker 3 (127.0.0.1:9003) is dead, last seen")
    assert dead.payload["data"]["broker"] == 3
    assert back.payload["summary"] == "[prod] Broker 3 (127.0.0.1:9003) is back"


class UnreachableAdmin:
    """An AdminClient whose cluster never answers."""

    def list_topics(self, **kwargs):
        raise TimeoutError("no answer")

    describe_cluster = list_topics


def test_it_notifies_a_cluster_becoming_unreachable_and_back_once_each(empty_cluster, webhook):
    cluster_state_apply(cluster=empty_cluster, state=state(1), now=timezone.now())

    assert cluster_sync(cluster=empty_cluster, admin=UnreachableAdmin()) is SyncOutcome.FAILED
    cluster_sync_error_record(cluster=empty_cluster, error="unreachable: again", now=timezone.now())
    cluster_state_apply(cluster=empty_cluster, state=state(1), now=timezone.now())
    cluster_state_apply(cluster=empty_cluster, state=state(1), now=timezone.now())

    assert events_sent(webhook) == [EventKind.CLUSTER_UNREACHABLE, EventKind.CLUSTER_BACK]
    down = webhook.deliveries.order_by("id").first()
    assert down.payload["summary"] == "[prod] Cluster is unreachable: unreachable: no answer"


def test_it_notifies_a_broker_whose_canary_latency_leaves_its_band(empty_cluster, webhook):
    t0 = timezone.now()
    for i, p99 in enumerate([5.0] * WARMUP_ROUNDS + [300.0, 310.0, 6.0]):
        window = CanaryWindow.objects.create(
            cluster=empty_cluster,
            broker_id=2,
            at=t0 + timedelta(seconds=5 * i),
            sent=10,
            acked=10,
            received=10,
            errors=0,
            produce_p50_ms=p99,
            produce_p99_ms=p99,
        )
        canary_bands_update(cluster=empty_cluster, windows=[window])

    assert events_sent(webhook) == [EventKind.CANARY_SLOW, EventKind.CANARY_BACK]
    slow, back = webhook.deliveries.order_by("id")
    assert slow.payload["summary"] == "[prod] Broker 2: canary p99 310 ms > its band 50 ms"
    assert slow.payload["data"]["p99_ms"] == 310.0
    assert back.payload["summary"] == "[prod] Broker 2: canary p99 back in its band (≤ 50 ms)"
