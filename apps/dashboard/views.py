"""Dashboard pages. Thin: permission checks, a selector call, a template.

Pages render their first state on the server (they work without JavaScript); the
scripts then keep them current from websocket notices, by fetching JSON from the
API (heatmap, charts) or the page itself (tables, see static/dashboard/live.js).
"""

from dataclasses import asdict

from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from apps.clusters.models import Cluster
from apps.clusters.selectors import broker_rows_list, topic_rows_list
from apps.plans.selectors import plan_progress, plans_list
from apps.plans.services.lifecycle import REQUESTABLE_MODES

from .selectors import (
    HEATMAP_METRICS,
    VIEW_CLUSTER_PERMISSION,
    cluster_health_get,
    cluster_health_list,
    cluster_visible_get,
    plan_actions_get,
    plan_eta_at_throttle,
    plan_loads_before_after,
    plan_visible_get,
)


def _cluster_or_404(request: HttpRequest, name: str) -> Cluster:
    cluster = cluster_visible_get(user=request.user, name=name)
    if cluster is None:
        raise Http404("no such cluster")
    return cluster


@login_required
@permission_required(VIEW_CLUSTER_PERMISSION, raise_exception=True)
def clusters_page(request: HttpRequest) -> HttpResponse:
    return render(
        request, "dashboard/clusters.html", {"healths": cluster_health_list(user=request.user)}
    )


@login_required
@permission_required(VIEW_CLUSTER_PERMISSION, raise_exception=True)
def cluster_page(request: HttpRequest, name: str) -> HttpResponse:
    cluster = _cluster_or_404(request, name)
    context = {
        "cluster": cluster,
        "health": cluster_health_get(cluster=cluster),
        "brokers": broker_rows_list(cluster=cluster),
        "topics": topic_rows_list(cluster=cluster),
        "metrics": HEATMAP_METRICS,
        "plans": plans_list(cluster=cluster)[:20]
        if request.user.has_perm("plans.view_plan")
        else [],
        "modes": [(m.value, m.label) for m in REQUESTABLE_MODES],
    }
    return render(request, "dashboard/cluster.html", context)


@login_required
@permission_required(VIEW_CLUSTER_PERMISSION, raise_exception=True)
@permission_required("plans.view_plan", raise_exception=True)
def plan_page(request: HttpRequest, name: str, plan_id: int) -> HttpResponse:
    cluster = _cluster_or_404(request, name)
    plan = plan_visible_get(user=request.user, plan_id=plan_id)
    if plan is None or plan.cluster_id != cluster.pk:
        raise Http404("no such plan")
    loads = plan_loads_before_after(plan=plan)
    context = {
        "cluster": cluster,
        "plan": plan,
        "actions": plan_actions_get(user=request.user, plan=plan),
        "progress": plan_progress(plan=plan),
        "eta_at_throttle": plan_eta_at_throttle(plan=plan),
        "balance": sorted((plan.report.get("balance") or {}).items()),
        "goals": sorted({g for goals in plan.moves.values_list("goals", flat=True) for g in goals}),
        "loads": asdict(loads) if loads else None,
    }
    return render(request, "dashboard/plan.html", context)


@login_required
@permission_required(VIEW_CLUSTER_PERMISSION, raise_exception=True)
def whatif_page(request: HttpRequest, name: str) -> HttpResponse:
    cluster = _cluster_or_404(request, name)
    context = {"cluster": cluster, "brokers": cluster.brokers.order_by("node_id")}
    return render(request, "dashboard/whatif.html", context)
