"""Plan pages: list (with the request form), detail with the decision forms, exports.

Views only parse input and call one service; the services check permissions and
state and raise PlanServiceError with a message for the operator.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.audit.services import client_address_get
from apps.clusters.models import Cluster

from .errors import PlanServiceError
from .forms import ApproveForm, CancelForm, RejectForm, RequestPlanForm, RollbackForm
from .models import Plan, PlanState
from .selectors import plan_export_json, plan_progress, plan_rollback_export_json, plans_list
from .services import (
    plan_approve,
    plan_cancel,
    plan_reject,
    plan_request,
    plan_rollback_request,
)


def _plan(plan_id: int) -> Plan:
    return get_object_or_404(Plan.objects.select_related("cluster"), pk=plan_id)


def _form_errors(form) -> str:
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


def _detail_context(plan: Plan, error: str = "") -> dict:
    return {
        "plan": plan,
        "moves": plan.moves.all(),
        "progress": plan_progress(plan=plan),
        "error": error,
        "balance": sorted((plan.report.get("balance") or {}).items()),
        "approve_form": ApproveForm(),
        "reject_form": RejectForm(),
    }


def _refused(request: HttpRequest, plan: Plan, message: str, status: int) -> HttpResponse:
    return render(request, "plans/detail.html", _detail_context(plan, error=message), status=status)


@require_GET
@login_required
@permission_required("plans.view_plan", raise_exception=True)
def plan_list(request: HttpRequest) -> HttpResponse:
    cluster = None
    name = request.GET.get("cluster")
    if name:
        cluster = get_object_or_404(Cluster, name=name)
    states = [s for s in request.GET.getlist("state") if s in PlanState.values]
    context = {
        "plans": plans_list(cluster=cluster, states=states)[:200],
        "cluster": cluster,
        "clusters": Cluster.objects.all(),
        "request_form": RequestPlanForm(initial={"cluster": name or ""}),
    }
    return render(request, "plans/list.html", context)


@require_GET
@login_required
@permission_required("plans.view_plan", raise_exception=True)
def plan_detail(request: HttpRequest, plan_id: int) -> HttpResponse:
    return render(request, "plans/detail.html", _detail_context(_plan(plan_id)))


@require_POST
@login_required
def plan_request_view(request: HttpRequest) -> HttpResponse:
    form = RequestPlanForm(request.POST)
    if not form.is_valid():
        return HttpResponse(f"invalid request: {_form_errors(form)}\n", status=400)
    cluster = Cluster.objects.filter(name=form.cleaned_data["cluster"]).first()
    if cluster is None:
        raise Http404("no such cluster")
    try:
        plan = plan_request(
            cluster=cluster,
            user=request.user,
            mode=form.cleaned_data["mode"],
            brokers=form.cleaned_data["brokers"],
            reason=form.cleaned_data["reason"],
            allow_data_loss=form.cleaned_data["allow_data_loss"],
            client_address=client_address_get(request=request),
        )
    except PlanServiceError as exc:
        return HttpResponse(f"{exc}\n", status=exc.status_code, content_type="text/plain")
    messages.success(request, f"Plan #{plan.pk} proposed.")
    return redirect("plans:detail", plan_id=plan.pk)


def _decide(request: HttpRequest, plan_id: int, form_class, call) -> HttpResponse:
    plan = _plan(plan_id)
    form = form_class(request.POST)
    if not form.is_valid():
        return _refused(request, plan, f"invalid form: {_form_errors(form)}", 400)
    try:
        result = call(plan, form.cleaned_data, client_address_get(request=request))
    except PlanServiceError as exc:
        plan.refresh_from_db()
        return _refused(request, plan, str(exc), exc.status_code)
    messages.success(request, f"Plan #{result.pk} is {result.state}.")
    return redirect("plans:detail", plan_id=result.pk)


@require_POST
@login_required
def plan_approve_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _decide(
        request,
        plan_id,
        ApproveForm,
        lambda plan, data, address: plan_approve(
            plan=plan,
            user=request.user,
            reason=data["reason"],
            confirm_data_loss=data["confirm_data_loss"],
            client_address=address,
        ),
    )


@require_POST
@login_required
def plan_reject_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _decide(
        request,
        plan_id,
        RejectForm,
        lambda plan, data, address: plan_reject(
            plan=plan, user=request.user, reason=data["reason"], client_address=address
        ),
    )


@require_POST
@login_required
def plan_cancel_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _decide(
        request,
        plan_id,
        CancelForm,
        lambda plan, data, address: plan_cancel(
            plan=plan, user=request.user, reason=data["reason"], client_address=address
        ),
    )


@require_POST
@login_required
def plan_rollback_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _decide(
        request,
        plan_id,
        RollbackForm,
        lambda plan, data, address: plan_rollback_request(
            plan=plan, user=request.user, reason=data["reason"], client_address=address
        ),
    )


@require_GET
@login_required
@permission_required("plans.view_plan", raise_exception=True)
def plan_export(request: HttpRequest, plan_id: int, which: str) -> HttpResponse:
    plan = _plan(plan_id)
    if which == "rollback":
        body, name = plan_rollback_export_json(plan=plan), f"plan-{plan.pk}-rollback.json"
    else:
        body, name = plan_export_json(plan=plan), f"plan-{plan.pk}-reassignment.json"
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
