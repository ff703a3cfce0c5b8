"""Load views: a cluster's measured load, per broker or per partition."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.clusters.models import Cluster
from apps.metrics.selectors import (
    broker_traffic_series,
    heatmap_get,
    loads_broker_filter,
    loads_partition_filter,
    stamped_answer_get,
)

from ..common.views import ClusterScopedMixin, query_validated
from .serializers import (
    BrokerLoadQuerySerializer,
    BrokerLoadSerializer,
    BrokerTrafficSerializer,
    HeatmapQuerySerializer,
    HeatmapSerializer,
    LoadQuerySerializer,
    PartitionLoadSerializer,
    TrafficQuerySerializer,
)


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


class HeatmapView(ClusterScopedMixin, APIView):
    @extend_schema(parameters=[HeatmapQuerySerializer], responses=HeatmapSerializer)
    def get(self, request: Request, name: str) -> Response:
        query = query_validated(HeatmapQuerySerializer, request)
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
            return dict(HeatmapSerializer(heatmap).data)

        return Response(_stamped(cluster=cluster, query=query, kind="heatmap", build=build))


class TrafficView(ClusterScopedMixin, APIView):
    @extend_schema(parameters=[TrafficQuerySerializer], responses=BrokerTrafficSerializer)
    def get(self, request: Request, name: str) -> Response:
        query = query_validated(TrafficQuerySerializer, request)
        cluster = self.cluster_get()

        def build() -> dict:
            traffic = broker_traffic_series(cluster=cluster, windows=query["windows"])
            return dict(BrokerTrafficSerializer(traffic).data)

        return Response(_stamped(cluster=cluster, query=query, kind="traffic", build=build))


class BrokerLoadListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = BrokerLoadSerializer

    @extend_schema(parameters=[BrokerLoadQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = query_validated(BrokerLoadQuerySerializer, self.request)
        return loads_broker_filter(
            cluster=self.cluster_get(), since=query.get("since"), until=query.get("until")
        )


class PartitionLoadListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = PartitionLoadSerializer

    @extend_schema(parameters=[LoadQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = query_validated(LoadQuerySerializer, self.request)
        return loads_partition_filter(
            cluster=self.cluster_get(),
            since=query.get("since"),
            until=query.get("until"),
            topic=query.get("topic", ""),
        )
