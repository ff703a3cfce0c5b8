"""Plan views: a cluster's plans, each plan's moves, the decisions taken on it."""

from django.http import Http404, HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit.services import client_address_get
from apps.plans.errors import PlanPermissionDenied, PlanServiceError
from apps.plans.models import Plan, PlanState
from apps.plans.selectors import (
    plan_export_json,
    plan_moves_filter,
    plan_rollback_export_json,
    plan_throttle_trace,
    plan_visible_get,
    plans_list,
)
from apps.plans.services import (
    execution_pause,
    execution_resume,
    execution_tune,
    plan_approve,
    plan_cancel,
    plan_execution_start,
    plan_reject,
    plan_request,
    plan_rollback_request,
)

from ..common.serializers import ErrorSerializer, ReasonSerializer
from ..common.views import ClusterScopedMixin, query_validated, refused
from ..services import plan_action_refused_record, plan_request_refused_record
from .serializers import (
    ApproveSerializer,
    EmptySerializer,
    ExportQuerySerializer,
    PlanDetailSerializer,
    PlanMoveQuerySerializer,
    PlanMoveSerializer,
    PlanRequestSerializer,
    PlanSerializer,
    RejectSerializer,
    ThrottlePointSerializer,
    TuneSerializer,
)


def _plan_or_404(request: Request, plan_id: int) -> Plan:
    plan = plan_visible_get(user=request.user, plan_id=plan_id)
    if plan is None:
        raise Http404("no such plan")
    return plan


class PlanListView(ClusterScopedMixin, generics.ListAPIView):
    """GET: the cluster's plans, newest first. POST: request a plan (operator)."""

    serializer_class = PlanSerializer

    def get_queryset(self):
        cluster = self.cluster_get()
        if not self.request.user.has_perm("plans.view_plan", cluster):
            raise PermissionDenied("you may not see plans")
        states = self.request.query_params.getlist("state")
        unknown = [x for x in states if x not in PlanState.values]
        if unknown:
            raise ValidationError({"state": f"unknown state {unknown[0]!r}"})
        return plans_list(cluster=cluster, states=states)

    @extend_schema(
        request=PlanRequestSerializer,
        responses={201: PlanDetailSerializer, 400: ErrorSerializer, 403: ErrorSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        cluster = self.cluster_get()
        body = PlanRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        address = client_address_get(request=request)
        try:
            plan = plan_request(
                cluster=cluster, user=request.user, client_address=address, **body.validated_data
            )
        except PlanPermissionDenied as exc:
            plan_request_refused_record(
                user=request.user,
                cluster=cluster,
                mode=body.validated_data["mode"],
                brokers=body.validated_data["brokers"],
                error=str(exc),
                client_address=address,
            )
            return refused(exc)
        except PlanServiceError as exc:
            return refused(exc)
        return Response(PlanDetailSerializer(plan, context={"request": request}).data, status=201)


class PlanDetailView(APIView):
    @extend_schema(responses=PlanDetailSerializer)
    def get(self, request: Request, plan_id: int) -> Response:
        plan = _plan_or_404(request, plan_id)
        return Response(PlanDetailSerializer(plan, context={"request": request}).data)


class PlanMoveListView(generics.ListAPIView):
    serializer_class = PlanMoveSerializer

    @extend_schema(parameters=[PlanMoveQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        plan = _plan_or_404(self.request, self.kwargs["plan_id"])
        query = query_validated(PlanMoveQuerySerializer, self.request)
        return plan_moves_filter(plan=plan, **query)


class PlanExportView(APIView):
    """Kafka's reassignment JSON (kafka-reassign-partitions.sh --reassignment-json-file)."""

    @extend_schema(parameters=[ExportQuerySerializer], responses={200: dict})
    def get(self, request: Request, plan_id: int) -> HttpResponse:
        plan = _plan_or_404(request, plan_id)
        which = query_validated(ExportQuerySerializer, request)["which"]
        if which == "rollback":
            body, filename = plan_rollback_export_json(plan=plan), f"plan-{plan.pk}-rollback.json"
        else:
            body, filename = plan_export_json(plan=plan), f"plan-{plan.pk}-reassignment.json"
        response = HttpResponse(body, content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class _PlanActionView(APIView):
    """POST a decision: validate the body, call the lifecycle service, answer the plan.

    The service checks permission and state; a refusal answers its status (403, 409,
    400) with its message, changes nothing, and a refused permission is audited."""

    action = ""
    body_serializer: type[serializers.Serializer] = ReasonSerializer
    created = False

    def call(self, *, plan: Plan, user, data: dict, client_address: str | None) -> Plan:
        raise NotImplementedError

    def post(self, request: Request, plan_id: int) -> Response:
        plan = _plan_or_404(request, plan_id)
        body = self.body_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        address = client_address_get(request=request)
        try:
            result = self.call(
                plan=plan, user=request.user, data=body.validated_data, client_address=address
            )
        except PlanPermissionDenied as exc:
            plan_action_refused_record(
                user=request.user,
                action=self.action,
                plan=plan,
                error=str(exc),
                client_address=address,
            )
            return refused(exc)
        except PlanServiceError as exc:
            return refused(exc)
        return Response(
            PlanDetailSerializer(result, context={"request": request}).data,
            status=201 if self.created else 200,
        )


def _action_schema(body, created: bool = False):
    ok = {201 if created else 200: PlanDetailSerializer}
    errors = {code: ErrorSerializer for code in (400, 403, 404, 409)}
    return extend_schema(request=body, responses=ok | errors)


class PlanApproveView(_PlanActionView):
    action = "approve"
    body_serializer = ApproveSerializer

    @_action_schema(ApproveSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        throttle = data.pop("throttle_bytes_per_sec")
        return plan_approve(
            plan=plan, user=user, client_address=client_address, throttle_rate=throttle, **data
        )


class PlanRejectView(_PlanActionView):
    action = "reject"
    body_serializer = RejectSerializer

    @_action_schema(RejectSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_reject(plan=plan, user=user, client_address=client_address, **data)


class PlanExecuteView(_PlanActionView):
    action = "execute"
    body_serializer = EmptySerializer

    @_action_schema(EmptySerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_execution_start(plan=plan, user=user, client_address=client_address)


class PlanCancelView(_PlanActionView):
    action = "cancel"

    @_action_schema(ReasonSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_cancel(plan=plan, user=user, client_address=client_address, **data)


class PlanPauseView(_PlanActionView):
    """Send no new batch until resumed; moves in flight finish."""

    action = "pause"

    @_action_schema(ReasonSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return execution_pause(plan=plan, user=user, client_address=client_address, **data)


class PlanResumeView(_PlanActionView):
    action = "resume"

    @_action_schema(ReasonSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return execution_resume(plan=plan, user=user, client_address=client_address, **data)


class PlanTuneView(_PlanActionView):
    """Change the throttle and move caps of an approved or running plan."""

    action = "tune"
    body_serializer = TuneSerializer

    @_action_schema(TuneSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        throttle = data.pop("throttle_bytes_per_sec")
        return execution_tune(
            plan=plan, user=user, client_address=client_address, throttle_rate=throttle, **data
        )


class PlanRollbackView(_PlanActionView):
    action = "rollback"
    created = True

    @_action_schema(ReasonSerializer, created=True)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_rollback_request(plan=plan, user=user, client_address=client_address, **data)


class PlanThrottleTraceView(APIView):
    """The plan's replication throttle over time: set, retuned, adapted, removed."""

    @extend_schema(responses=ThrottlePointSerializer(many=True))
    def get(self, request: Request, plan_id: int) -> Response:
        plan = _plan_or_404(request, plan_id)
        return Response(ThrottlePointSerializer(plan_throttle_trace(plan=plan), many=True).data)
