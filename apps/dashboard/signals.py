"""Receivers that turn the domain apps' signals and writes into live events, so the
domain apps never import the dashboard (dependencies point one way):

- `clusters.signals.cluster_synced`: one stamp of the model per sync; the cluster
  pages refetch only when it differs from theirs;
- `plans.signals.execution_progressed`: plan pages redraw the progress bar;
- every plan state change and executor step is written to the audit trail in the
  transaction that makes it, so an audit event about a plan is our cue to tell that
  plan's watchers (after commit), whether the detector, the executor or a user did it;
- a finished aggregation run means new load windows: traffic charts and heatmaps
  refetch.

`events.py` sends after commit and never raises.
"""

from django.db.models.signals import post_save
from django.dispatch import receiver

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster
from apps.clusters.signals import cluster_synced
from apps.metrics.models import AggregationRun
from apps.metrics.selectors import cluster_state_stamp
from apps.plans.models import Plan
from apps.plans.signals import execution_progressed

from .events import (
    cluster_changed_send,
    execution_progress_send,
    loads_changed_send,
    plan_changed_send,
)

PLAN_OBJECT_TYPE = Plan._meta.label_lower  # "plans.plan"


@receiver(cluster_synced, sender=Cluster, dispatch_uid="dashboard_cluster_push")
def _cluster_push(sender, cluster: Cluster, **kwargs) -> None:
    # One stamp per sync, whatever the number of pages open: each compares it with
    # its own and refetches only if the model or the newest window changed.
    synced_at = cluster.last_synced_at.isoformat() if cluster.last_synced_at else ""
    cluster_changed_send(
        cluster_id=cluster.pk, stamp=cluster_state_stamp(cluster_id=cluster.pk), synced_at=synced_at
    )


@receiver(execution_progressed, sender=Plan, dispatch_uid="dashboard_progress_push")
def _progress_push(sender, plan: Plan, done: int, total: int, bytes_done: int, **kwargs) -> None:
    execution_progress_send(
        cluster_id=plan.cluster_id, plan_id=plan.pk, done=done, total=total, bytes_done=bytes_done
    )


@receiver(post_save, sender=AuditEvent, dispatch_uid="dashboard_plan_event_push")
def _plan_event_push(sender, instance: AuditEvent, created: bool, **kwargs) -> None:
    if not created or instance.object_type != PLAN_OBJECT_TYPE or not instance.object_id.isdigit():
        return
    row = Plan.objects.filter(pk=int(instance.object_id)).values_list("cluster_id", "state").first()
    if row is None:
        return
    cluster_id, state = row
    plan_changed_send(cluster_id=cluster_id, plan_id=int(instance.object_id), state=state)


@receiver(post_save, sender=AggregationRun, dispatch_uid="dashboard_loads_push")
def _loads_push(sender, instance: AggregationRun, created: bool, **kwargs) -> None:
    if instance.status == AggregationRun.Status.SUCCEEDED and instance.output_rows:
        # The stamp names the new window, so pages share one heatmap and one traffic answer.
        loads_changed_send(
            cluster_id=instance.cluster_id,
            stamp=cluster_state_stamp(cluster_id=instance.cluster_id),
        )
