"""Where notification events come from, without their senders knowing about us:

- the plans app's `plan_changed`, sent with the audit row of every plan decision and
  execution step in the transaction that makes it;
- the clusters app's sync sends `broker_state_changed` and `cluster_reachability_changed`;
- the canary sends `canary_band_changed` when a broker's latency leaves its band or
  comes back.

A failure here is logged and rolled back to a savepoint: a notification problem must
never fail the change it reports.
"""

import logging
from collections.abc import Callable

from django.db import transaction
from django.dispatch import receiver

from apps.audit.models import AuditEvent
from apps.canary.signals import canary_band_changed
from apps.clusters.signals import broker_state_changed, cluster_reachability_changed
from apps.plans.signals import plan_changed

from .events import (
    AUDIT_ACTIONS,
    Event,
    event_broker,
    event_canary_band,
    event_cluster,
    event_from_audit,
)
from .services.dispatch import notifications_dispatch

logger = logging.getLogger(__name__)


def _dispatch_safely(build: Callable[[], Event | None]) -> None:
    try:
        with transaction.atomic():
            event = build()
            if event is not None:
                notifications_dispatch(event=event)
    except Exception:
        logger.exception("a notification could not be queued")


@receiver(plan_changed, dispatch_uid="notifications_from_audit")
def _from_plan_changed(sender, action: str, audit_event: AuditEvent, **kwargs) -> None:
    if action in AUDIT_ACTIONS:
        _dispatch_safely(lambda: event_from_audit(audit=audit_event))


@receiver(broker_state_changed, dispatch_uid="notifications_from_broker_state")
def _from_broker_state(sender, cluster, node_id: int, alive: bool, at, **kwargs) -> None:
    _dispatch_safely(lambda: event_broker(cluster=cluster, node_id=node_id, alive=alive, at=at))


@receiver(cluster_reachability_changed, dispatch_uid="notifications_from_reachability")
def _from_reachability(sender, cluster, reachable: bool, error: str, at, **kwargs) -> None:
    _dispatch_safely(
        lambda: event_cluster(cluster=cluster, reachable=reachable, error=error, at=at)
    )


@receiver(canary_band_changed, dispatch_uid="notifications_from_canary_band")
def _from_canary_band(sender, cluster, **kwargs) -> None:
    fields = ("broker_id", "outside", "p99_ms", "top_ms", "baseline_ms", "at")
    values = {k: kwargs[k] for k in fields}
    _dispatch_safely(lambda: event_canary_band(cluster=cluster, **values))
