"""Receivers that turn the domain apps' signals and writes into live events, so the
domain apps never import the dashboard (dependencies point one way):

- `clusters.signals.cluster_synced`: one stamp of the model per sync; the cluster
  pages refetch only when it differs from theirs;
- `plans.signals.execution_progressed`: plan pages redraw the progress bar;
- `plans.signals.plan_changed`: a plan's state changed or its execution took a step
  (whether the detector, the executor or a user did it): that plan's watchers are told
  after commit;
- `metrics.signals.loads_stored`: new load windows: traffic charts and heatmaps refetch.

`events.py` sends after commit and never raises.
"""

from django.dispatch import receiver

from apps.clusters.models import Cluster
from apps.clusters.signals import cluster_synced
from apps.metrics.selectors import cluster_state_stamp
from apps.metrics.signals import loads_stored
from apps.plans.models import Plan
from apps.plans.signals import execution_progressed, plan_changed

from .events import (
    cluster_changed_send,
    execution_progress_send,
    loads_changed_send,
    plan_changed_send,
)


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


@receiver(plan_changed, sender=Plan, dispatch_uid="dashboard_plan_event_push")
def _plan_event_push(sender, plan: Plan, **kwargs) -> None:
    plan_changed_send(cluster_id=plan.cluster_id, plan_id=plan.pk, state=plan.state)


@receiver(loads_stored, sender=Cluster, dispatch_uid="dashboard_loads_push")
def _loads_push(sender, cluster: Cluster, **kwargs) -> None:
    # The stamp names the new window, so pages share one heatmap and one traffic answer.
    loads_changed_send(cluster_id=cluster.pk, stamp=cluster_state_stamp(cluster_id=cluster.pk))
