"""Drain views: the brokers a remove-brokers plan keeps empty, undrained by an operator."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit.services import client_address_get
from apps.plans.errors import PlanServiceError
from apps.plans.selectors import drained_brokers_list
from apps.plans.services import broker_undrain

from ..common.serializers import ErrorSerializer, ReasonSerializer
from ..common.views import ClusterScopedMixin, refused
from .serializers import DrainedBrokerSerializer


class DrainedBrokerListView(ClusterScopedMixin, APIView):
    """The cluster's drained brokers: kept empty until an operator undrains them."""

    @extend_schema(responses=DrainedBrokerSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        rows = drained_brokers_list(cluster=self.cluster_get())
        return Response(DrainedBrokerSerializer(rows, many=True).data)


class BrokerUndrainView(ClusterScopedMixin, APIView):
    """Undrain a broker (operator): plans may place replicas on it again."""

    @extend_schema(
        request=ReasonSerializer,
        responses={204: None, 400: ErrorSerializer, 403: ErrorSerializer},
    )
    def post(self, request: Request, name: str, node_id: int) -> Response:
        cluster = self.cluster_get()
        body = ReasonSerializer(data=request.data)
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
            return refused(exc)
        return Response(status=204)
