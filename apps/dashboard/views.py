"""Dashboard pages. Thin: permission checks, a selector call, a template.

Pages render their first state on the server (they work without JavaScript); the
scripts then keep them current from websocket notices, by fetching JSON from the
API (heatmap, charts) or the page itself (tables, see static/dashboard/live.js).
"""

from dataclasses import asdict
from enum import StrEnum

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.access.actions import GrantAction
from apps.audit.actions import AccountAction, AuthAction
from apps.audit.selectors import (
    audit_events_csv_lines,
    audit_events_explore,
    audit_events_json_chunks,
)
from apps.clusters.actions import ClusterAction
from apps.clusters.models import Cluster
from apps.clusters.selectors import (
    VIEW_CLUSTER_PERMISSION,
    broker_rows_list,
    cluster_ids_with,
    cluster_rounds_list,
    cluster_visible_get,
    clusters_visible_list,
    topic_rows_page,
)
from apps.metrics.selectors import HEATMAP_METRICS, cluster_state_stamp
from apps.notifications.actions import ChannelAction
from apps.plans.actions import BrokerAction, ExecutionAction, PlanAction, PolicyAction
from apps.plans.selectors import (
    audit_plan_clusters,
    cluster_audited_objects,
    cluster_health_get,
    cluster_health_list,
    demoted_brokers_list,
    drained_brokers_list,
    plan_actions_get,
    plan_estimate_check,
    plan_eta_at_throttle,
    plan_goals_list,
    plan_loads_before_after,
    plan_progress,
    plan_replacement_get,
    plan_report_summary,
    plan_shortfalls_get,
    plan_visible_get,
    plans_board_get,
)
from apps.plans.services import REQUESTABLE_MODES

from .forms import AuditExploreForm
from .grants_required import grant_required
from .perms import perms_on_cluster

# What the trail records, offered as suggestions in the explorer's action filter: each
# kind's prefix, then its actions. The filter takes any prefix.
AUDIT_ACTION_KINDS: tuple[tuple[str, type[StrEnum]], ...] = (
    ("plan.", PlanAction),
    ("execution.", ExecutionAction),
    ("policy.", PolicyAction),
    ("broker.", BrokerAction),
    ("cluster.", ClusterAction),
    ("notification_channel.", ChannelAction),
    ("auth.", AuthAction),
    ("grant.", GrantAction),
    ("", AccountAction),
)
AUDIT_ACTIONS = tuple(
    text
    for prefix, kind in AUDIT_ACTION_KINDS
    for text in ((prefix,) if prefix else ()) + tuple(kind)
)


def _cluster_or_404(request: HttpRequest, name: str) -> Cluster:
    cluster = cluster_visible_get(user=request.user, name=name)
    if cluster is None:
        raise Http404("no such cluster")
    return cluster


@grant_required(VIEW_CLUSTER_PERMISSION)
def clusters_page(request: HttpRequest) -> HttpResponse:
    return render(
        request, "dashboard/clusters.html", {"healths": cluster_health_list(user=request.user)}
    )


@grant_required(VIEW_CLUSTER_PERMISSION)
def cluster_page(request: HttpRequest, name: str) -> HttpResponse:
    cluster = _cluster_or_404(request, name)
    context = {
        "cluster": cluster,
        "health": cluster_health_get(cluster=cluster),
        "brokers": broker_rows_list(cluster=cluster),
        "drained": drained_brokers_list(cluster=cluster),
        "demoted": demoted_brokers_list(cluster=cluster),
        "topics": topic_rows_page(
            cluster=cluster,
            search=request.GET.get("topic", "").strip()[:249],
            page=request.GET.get("topics_page"),
        ),
        "metrics": HEATMAP_METRICS,
        "board": plans_board_get(cluster=cluster)
        if request.user.has_perm("plans.view_plan", cluster)
        else None,
        "modes": [(m.value, m.label) for m in REQUESTABLE_MODES],
        "cluster_perms": perms_on_cluster(user=request.user, cluster=cluster),
        "now": timezone.now(),
        "rounds": cluster_rounds_list(cluster=cluster),
        # What this page shows, stamped: live updates with the same stamp change nothing.
        "stamp": cluster_state_stamp(cluster_id=cluster.pk),
    }
    return render(request, "dashboard/cluster.html", context)


@grant_required(VIEW_CLUSTER_PERMISSION)
@grant_required("plans.view_plan")
def plan_page(request: HttpRequest, name: str, plan_id: int) -> HttpResponse:
    cluster = _cluster_or_404(request, name)
    plan = plan_visible_get(user=request.user, plan_id=plan_id)
    if plan is None or plan.cluster_id != cluster.pk:
        raise Http404("no such plan")
    # The report's summary only: its moves (one per partition) stay in the database.
    report = plan_report_summary(plan=plan)
    context = {
        "cluster": cluster,
        "plan": plan,
        "actions": plan_actions_get(user=request.user, plan=plan),
        "progress": plan_progress(plan=plan),
        "eta_at_throttle": plan_eta_at_throttle(plan=plan),
        "estimate": plan_estimate_check(plan=plan),
        "balance": sorted((report.get("balance") or {}).items()),
        "shortfalls": plan_shortfalls_get(plan=plan, report=report),
        "goals": plan_goals_list(plan=plan),
        "replacement": plan_replacement_get(plan=plan),
        # A drain that lowers the metrics topic's RF says so (plans.services.drain_fit).
        "rf_lowered": (report.get("rf_lowered") or {}).get("note", ""),
    }
    return render(request, "dashboard/plan.html", context)


@require_GET
@grant_required(VIEW_CLUSTER_PERMISSION)
@grant_required("plans.view_plan")
def plan_loads(request: HttpRequest, name: str, plan_id: int) -> JsonResponse:
    """The plan page's before / after bars, fetched after the page: {} when the cluster
    has nothing the planner can model."""
    cluster = _cluster_or_404(request, name)
    plan = plan_visible_get(user=request.user, plan_id=plan_id)
    if plan is None or plan.cluster_id != cluster.pk:
        raise Http404("no such plan")
    loads = plan_loads_before_after(plan=plan)
    return JsonResponse(asdict(loads) if loads else {})


@grant_required(VIEW_CLUSTER_PERMISSION)
def whatif_page(request: HttpRequest, name: str) -> HttpResponse:
    cluster = _cluster_or_404(request, name)
    context = {"cluster": cluster, "brokers": cluster.brokers.order_by("node_id")}
    return render(request, "dashboard/whatif.html", context)


AUDIT_PAGE_SIZE = 100
AUDIT_VIEW = "audit.view_auditevent"
AUDIT_EXPORT = "audit.export_auditevent"


def _audit_filtered(
    request: HttpRequest, perm: str
) -> tuple[AuditExploreForm, QuerySet | None, str]:
    """The form, the events it selects among those of the clusters where the user holds
    `perm` (None when invalid) and the error to show."""
    form = AuditExploreForm(request.GET or None)
    if request.GET and not form.is_valid():
        errors = "; ".join(f"{f}: {' '.join(m)}" for f, m in form.errors.items())
        return form, None, errors
    filters = {k: v for k, v in (form.cleaned_data if request.GET else {}).items() if v}
    about = None
    if "cluster" in filters:
        cluster = cluster_visible_get(user=request.user, name=filters.pop("cluster"))
        if cluster is None:
            return form, None, "cluster: no such cluster"
        about = cluster_audited_objects(cluster=cluster)
    visible = cluster_ids_with(user=request.user, perm=perm)
    return form, audit_events_explore(about=about, cluster_ids=visible, **filters), ""


@require_GET
@grant_required(AUDIT_VIEW)
def audit_page(request: HttpRequest) -> HttpResponse:
    form, events, error = _audit_filtered(request, AUDIT_VIEW)
    if events is None:
        return HttpResponseBadRequest(f"invalid filter: {error}\n", content_type="text/plain")
    page = Paginator(events, AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    # Events about a plan link to its page.
    plan_clusters = audit_plan_clusters(events=page.object_list)
    rows = [
        (e, plan_clusters.get(e.object_id) if e.object_type == "plans.plan" else None)
        for e in page.object_list
    ]
    context = {
        "form": form,
        "page": page,
        "rows": rows,
        "query": query.urlencode(),
        "clusters": clusters_visible_list(user=request.user),
        "actions": AUDIT_ACTIONS,
    }
    return render(request, "dashboard/audit.html", context)


@require_GET
@grant_required(AUDIT_EXPORT)
def audit_export(request: HttpRequest, fmt: str) -> HttpResponse:
    _, events, error = _audit_filtered(request, AUDIT_EXPORT)
    if events is None:
        return HttpResponseBadRequest(f"invalid filter: {error}\n", content_type="text/plain")
    rows = events.iterator()
    if fmt == "csv":
        response = StreamingHttpResponse(
            audit_events_csv_lines(events=rows), content_type="text/csv"
        )
    else:
        response = StreamingHttpResponse(
            audit_events_json_chunks(events=rows), content_type="application/json"
        )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
    return response
