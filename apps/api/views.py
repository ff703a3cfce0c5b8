"""REST API views: thin. They validate input with serializers, read with selectors
and change state only through the owning app's services."""

from django.http import Http404, HttpResponse
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit.selectors import audit_events_explore
from apps.audit.services import client_address_get
from apps.clusters.models import Cluster
from apps.clusters.selectors import (
    broker_rows_list,
    cluster_visible_get,
    partitions_filter,
    topic_rows_list,
)
from apps.metrics.selectors import (
    broker_traffic_series,
    heatmap_get,
    loads_broker_filter,
    loads_partition_filter,
    stamped_answer_get,
)
from apps.plans.errors import PlanPermissionDenied, PlanServiceError
from apps.plans.models import Plan, PlanState
from apps.plans.selectors import (
    cluster_audited_objects,
    cluster_health_get,
    cluster_health_list,
    drained_brokers_list,
    plan_export_json,
    plan_moves_filter,
    plan_rollback_export_json,
    plan_visible_get,
    plans_list,
)
from apps.plans.services import (
    broker_undrain,
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
from apps.plans.whatif import whatif_simulate

from . import serializers as s
from .permissions import CanViewAudit, CanViewClusters
from .services import (
    plan_action_refused_record,
    plan_request_refused_record,
    token_create,
    token_revoke,
)

# --- tokens ---------------------------------------------------------------------


class TokenObtainView(ObtainAuthToken):
    """POST username and password: the user's API token (created and audited if new).
    Failed attempts count towards the sign-in lockout like the sign-in page's."""

    def post(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # django-axes refused the attempt: answer as its middleware does for pages.
            if getattr(request, "axes_locked_out", False):
                return Response({"detail": "too many failed sign-ins: try again later"}, status=429)
            raise ValidationError(serializer.errors)
        token = token_create(
            user=serializer.validated_data["user"],
            client_address=client_address_get(request=request),
        )
        return Response({"token": token.key})


class TokenRevokeView(APIView):
    """POST: revoke the caller's own API token (audited); 404 if there is none."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None, 404: s.ErrorSerializer})
    def post(self, request: Request) -> Response:
        revoked = token_revoke(
            user=request.user,
            actor=request.user,
            client_address=client_address_get(request=request),
        )
        if not revoked:
            return Response({"detail": "you have no API token"}, status=404)
        return Response(status=204)


def _query(serializer_class, request: Request) -> dict:
    """Validated query parameters; a bad one answers 400 naming it."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _stamped(*, cluster: Cluster, query: dict, kind: str, build) -> dict:
    """`build()`, shared by every viewer of the cluster state the query's stamp names
    (the same for anyone who may see the cluster); without a stamp, built afresh."""
    params = {k: v for k, v in query.items() if k != "stamp"}
    if not query["stamp"]:
        return build()
    _, answer = stamped_answer_get(
        cluster_id=cluster.pk,
        token=query["stamp"],
        name=repr((kind, sorted(params.items()))),
        build=build,
    )
    return answer


class ClusterScopedMixin:
    """Resolves <name> to a cluster the user may see; 404 otherwise."""

    def cluster_get(self) -> Cluster:
        cluster = cluster_visible_get(user=self.request.user, name=self.kwargs["name"])
        if cluster is None:
            raise Http404("no such cluster")
        return cluster


class ClusterListView(APIView):
    @extend_schema(responses=s.ClusterHealthSerializer(many=True))
    def get(self, request: Request) -> Response:
        healths = cluster_health_list(user=request.user)
        return Response(s.ClusterHealthSerializer(healths, many=True).data)


class ClusterDetailView(ClusterScopedMixin, APIView):
    @extend_schema(responses=s.ClusterHealthSerializer)
    def get(self, request: Request, name: str) -> Response:
        health = cluster_health_get(cluster=self.cluster_get())
        return Response(s.ClusterHealthSerializer(health).data)


class BrokerListView(ClusterScopedMixin, APIView):
    @extend_schema(responses=s.BrokerRowSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        rows = broker_rows_list(cluster=self.cluster_get())
        return Response(s.BrokerRowSerializer(rows, many=True).data)


class DrainedBrokerListView(ClusterScopedMixin, APIView):
    """The cluster's drained brokers: kept empty until an operator undrains them."""

    @extend_schema(responses=s.DrainedBrokerSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        rows = drained_brokers_list(cluster=self.cluster_get())
        return Response(s.DrainedBrokerSerializer(rows, many=True).data)


class BrokerUndrainView(ClusterScopedMixin, APIView):
    """Undrain a broker (operator): plans may place replicas on it again."""

    @extend_schema(
        request=s.ReasonSerializer,
        responses={204: None, 400: s.ErrorSerializer, 403: s.ErrorSerializer},
    )
    def post(self, request: Request, name: str, node_id: int) -> Response:
        cluster = self.cluster_get()
        body = s.ReasonSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            broker_undrain(
                cluster=cluster,
                node_id=node_id,
                user=request.user,
                reason=body.validated_data.get("reason", ""),
                client_address=client_address_get(request=request),
            )
        except PlanServiceError as exc:
            return _refused(exc)
        return Response(status=204)


class TopicListView(ClusterScopedMixin, APIView):
    @extend_schema(responses=s.TopicRowSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        rows = topic_rows_list(cluster=self.cluster_get())
        return Response(s.TopicRowSerializer(rows, many=True).data)


class PartitionListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = s.PartitionSerializer

    @extend_schema(parameters=[s.PartitionQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = _query(s.PartitionQuerySerializer, self.request)
        return partitions_filter(
            cluster=self.cluster_get(), topic=query.get("topic", ""), broker=query.get("broker")
        )


class HeatmapView(ClusterScopedMixin, APIView):
    @extend_schema(parameters=[s.HeatmapQuerySerializer], responses=s.HeatmapSerializer)
    def get(self, request: Request, name: str) -> Response:
        query = _query(s.HeatmapQuerySerializer, request)
        cluster = self.cluster_get()

        def build() -> dict:
            heatmap = heatmap_get(
                cluster=cluster,
                metric=query["metric"],
                include_internal=query["internal"],
                search=query["search"],
                sort=query["sort"],
                limit=query["limit"],
                offset=query["offset"],
            )
            return dict(s.HeatmapSerializer(heatmap).data)

        return Response(_stamped(cluster=cluster, query=query, kind="heatmap", build=build))


class TrafficView(ClusterScopedMixin, APIView):
    @extend_schema(parameters=[s.TrafficQuerySerializer], responses=s.BrokerTrafficSerializer)
    def get(self, request: Request, name: str) -> Response:
        query = _query(s.TrafficQuerySerializer, request)
        cluster = self.cluster_get()

        def build() -> dict:
            traffic = broker_traffic_series(cluster=cluster, windows=query["windows"])
            return dict(s.BrokerTrafficSerializer(traffic).data)

        return Response(_stamped(cluster=cluster, query=query, kind="traffic", build=build))


class BrokerLoadListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = s.BrokerLoadSerializer

    @extend_schema(parameters=[s.BrokerLoadQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = _query(s.BrokerLoadQuerySerializer, self.request)
        return loads_broker_filter(
            cluster=self.cluster_get(), since=query.get("since"), until=query.get("until")
        )


class PartitionLoadListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = s.PartitionLoadSerializer

    @extend_schema(parameters=[s.LoadQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = _query(s.LoadQuerySerializer, self.request)
        return loads_partition_filter(
            cluster=self.cluster_get(),
            since=query.get("since"),
            until=query.get("until"),
            topic=query.get("topic", ""),
        )


# --- plans ----------------------------------------------------------------------


def _plan_or_404(request: Request, plan_id: int) -> Plan:
    plan = plan_visible_get(user=request.user, plan_id=plan_id)
    if plan is None:
        raise Http404("no such plan")
    return plan


def _refused(exc: PlanServiceError) -> Response:
    body: dict = {"detail": str(exc)}
    newer = getattr(exc, "newer_plan_id", None)
    if newer is not None:
        # The proposal to review instead of a superseded or stale one (its API resource).
        body["newer_plan"] = {"id": newer, "url": reverse("api:plan", kwargs={"plan_id": newer})}
    return Response(body, status=exc.status_code)


class PlanListView(ClusterScopedMixin, generics.ListAPIView):
    """GET: the cluster's plans, newest first. POST: request a plan (operator)."""

    serializer_class = s.PlanSerializer

    def get_queryset(self):
        if not self.request.user.has_perm("plans.view_plan"):
            raise PermissionDenied("you may not see plans")
        states = self.request.query_params.getlist("state")
        unknown = [x for x in states if x not in PlanState.values]
        if unknown:
            raise ValidationError({"state": f"unknown state {unknown[0]!r}"})
        return plans_list(cluster=self.cluster_get(), states=states)

    @extend_schema(
        request=s.PlanRequestSerializer,
        responses={201: s.PlanDetailSerializer, 400: s.ErrorSerializer, 403: s.ErrorSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        cluster = self.cluster_get()
        body = s.PlanRequestSerializer(data=request.data)
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
            return _refused(exc)
        except PlanServiceError as exc:
            return _refused(exc)
        return Response(s.PlanDetailSerializer(plan, context={"request": request}).data, status=201)


class PlanDetailView(APIView):
    @extend_schema(responses=s.PlanDetailSerializer)
    def get(self, request: Request, plan_id: int) -> Response:
        plan = _plan_or_404(request, plan_id)
        return Response(s.PlanDetailSerializer(plan, context={"request": request}).data)


class PlanMoveListView(generics.ListAPIView):
    serializer_class = s.PlanMoveSerializer

    @extend_schema(parameters=[s.PlanMoveQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        plan = _plan_or_404(self.request, self.kwargs["plan_id"])
        query = _query(s.PlanMoveQuerySerializer, self.request)
        return plan_moves_filter(plan=plan, **query)


class PlanExportView(APIView):
    """Kafka's reassignment JSON (kafka-reassign-partitions.sh --reassignment-json-file)."""

    @extend_schema(parameters=[s.ExportQuerySerializer], responses={200: dict})
    def get(self, request: Request, plan_id: int) -> HttpResponse:
        plan = _plan_or_404(request, plan_id)
        which = _query(s.ExportQuerySerializer, request)["which"]
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
    body_serializer: type[serializers.Serializer] = s.ReasonSerializer
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
            return _refused(exc)
        except PlanServiceError as exc:
            return _refused(exc)
        return Response(
            s.PlanDetailSerializer(result, context={"request": request}).data,
            status=201 if self.created else 200,
        )


def _action_schema(body, created: bool = False):
    ok = {201 if created else 200: s.PlanDetailSerializer}
    errors = {code: s.ErrorSerializer for code in (400, 403, 404, 409)}
    return extend_schema(request=body, responses=ok | errors)


class PlanApproveView(_PlanActionView):
    action = "approve"
    body_serializer = s.ApproveSerializer

    @_action_schema(s.ApproveSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        throttle = data.pop("throttle_bytes_per_sec")
        return plan_approve(
            plan=plan, user=user, client_address=client_address, throttle_rate=throttle, **data
        )


class PlanRejectView(_PlanActionView):
    action = "reject"
    body_serializer = s.RejectSerializer

    @_action_schema(s.RejectSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_reject(plan=plan, user=user, client_address=client_address, **data)


class PlanExecuteView(_PlanActionView):
    action = "execute"
    body_serializer = s.EmptySerializer

    @_action_schema(s.EmptySerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_execution_start(plan=plan, user=user, client_address=client_address)


class PlanCancelView(_PlanActionView):
    action = "cancel"

    @_action_schema(s.ReasonSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_cancel(plan=plan, user=user, client_address=client_address, **data)


class PlanPauseView(_PlanActionView):
    """Send no new batch until resumed; moves in flight finish."""

    action = "pause"

    @_action_schema(s.ReasonSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return execution_pause(plan=plan, user=user, client_address=client_address, **data)


class PlanResumeView(_PlanActionView):
    action = "resume"

    @_action_schema(s.ReasonSerializer)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return execution_resume(plan=plan, user=user, client_address=client_address, **data)


class PlanTuneView(_PlanActionView):
    """Change the throttle and move caps of an approved or running plan."""

    action = "tune"
    body_serializer = s.TuneSerializer

    @_action_schema(s.TuneSerializer)
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

    @_action_schema(s.ReasonSerializer, created=True)
    def post(self, request: Request, plan_id: int) -> Response:
        return super().post(request, plan_id)

    def call(self, *, plan, user, data, client_address):
        return plan_rollback_request(plan=plan, user=user, client_address=client_address, **data)


# --- what-if -----------------------------------------------------------------------


class WhatIfView(ClusterScopedMixin, APIView):
    """Simulate brokers added / removed or traffic scaled; proposes nothing."""

    @extend_schema(
        request=s.WhatIfRequestSerializer,
        responses={200: s.WhatIfSerializer, 400: s.ErrorSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        cluster = self.cluster_get()
        body = s.WhatIfRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            result = whatif_simulate(cluster=cluster, **body.validated_data)
        except PlanServiceError as exc:
            return _refused(exc)
        return Response(s.WhatIfSerializer(result).data)


# --- audit --------------------------------------------------------------------------


class AuditEventListView(generics.ListAPIView):
    """The audit trail, newest first: filter by cluster, actor, action (prefix), time."""

    serializer_class = s.AuditEventSerializer
    permission_classes = [CanViewClusters, CanViewAudit]

    @extend_schema(parameters=[s.AuditQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = _query(s.AuditQuerySerializer, self.request)
        about = None
        if "cluster" in query:
            cluster = cluster_visible_get(user=self.request.user, name=query.pop("cluster"))
            if cluster is None:
                raise ValidationError({"cluster": "no such cluster"})
            about = cluster_audited_objects(cluster=cluster)
        return audit_events_explore(about=about, **query)
