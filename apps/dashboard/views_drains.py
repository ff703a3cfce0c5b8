"""Drained and demoted brokers on the cluster page: the operator's Undrain and Undemote
actions (POST + CSRF)."""

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from apps.audit.services import client_address_get
from apps.clusters.selectors import VIEW_CLUSTER_PERMISSION, cluster_visible_get
from apps.plans.errors import PlanServiceError
from apps.plans.services import broker_undemote, broker_undrain

from .grants_required import grant_required


@require_POST
@grant_required(VIEW_CLUSTER_PERMISSION)
@grant_required("plans.request_plan")
def broker_undrain_view(request: HttpRequest, name: str, node_id: int) -> HttpResponse:
    cluster = cluster_visible_get(user=request.user, name=name)
    if cluster is None:
        raise Http404("no such cluster")
    try:
        broker_undrain(
            cluster=cluster,
            node_id=node_id,
            user=request.user,
            reason=request.POST.get("reason", "").strip()[:2000],
            client_address=client_address_get(request=request),
        )
    except PlanServiceError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Broker {node_id} undrained: plans may place replicas on it again, and the "
            "balancer moves load onto it.",
        )
    return redirect("dashboard:cluster", name=cluster.name)


@require_POST
@grant_required(VIEW_CLUSTER_PERMISSION)
@grant_required("plans.request_plan")
def broker_undemote_view(request: HttpRequest, name: str, node_id: int) -> HttpResponse:
    cluster = cluster_visible_get(user=request.user, name=name)
    if cluster is None:
        raise Http404("no such cluster")
    try:
        broker_undemote(
            cluster=cluster,
            node_id=node_id,
            user=request.user,
            reason=request.POST.get("reason", "").strip()[:2000],
            client_address=client_address_get(request=request),
        )
    except PlanServiceError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request,
            f"Broker {node_id} undemoted: plans may give it leadership again, and the "
            "balancer moves leadership onto it when leadership is out of balance.",
        )
    return redirect("dashboard:cluster", name=cluster.name)
