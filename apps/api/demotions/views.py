"""Demotion views: the brokers a demote plan keeps from leading, undemoted by an
operator. A demotion is requested as a plan of mode `demote` (POST .../plans/)."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.audit.services import client_address_get
from apps.plans.errors import PlanServiceError
from apps.plans.selectors import demoted_brokers_list
from apps.plans.services import broker_undemote

from ..common.serializers import ErrorSerializer, ReasonSerializer
from ..common.views import ClusterScopedMixin, refused
from .serializers import DemotedBrokerSerializer


class DemotedBrokerListView(ClusterScopedMixin, APIView):
    """The cluster's demoted brokers: kept from leading until an operator undemotes them."""

    @extend_schema(responses=DemotedBrokerSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        rows = demoted_brokers_list(cluster=self.cluster_get())
        return Response(DemotedBrokerSerializer(rows, many=True).data)


class BrokerUndemoteView(ClusterScopedMixin, APIView):
    """Undemote a broker (operator): plans may give it leadership again."""

    @extend_schema(
        request=ReasonSerializer,
        responses={204: None, 400: ErrorSerializer, 403: ErrorSerializer},
    )
    def post(self, request: Request, name: str, node_id: int) -> Response:
        cluster = self.cluster_get()
        body = ReasonSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            broker_undemote(
                cluster=cluster,
                node_id=node_id,
                user=request.user,
                reason=body.validated_data.get("reason", ""),
                client_address=client_address_get(request=request),
            )
        except PlanServiceError as exc:
            return refused(exc)
        return Response(status=204)
