"""Cluster views: read-only, each answering one reader of the cluster's state."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.clusters.selectors import broker_rows_list, partitions_filter, topic_rows_list
from apps.plans.selectors import cluster_health_get, cluster_health_list

from ..common.views import ClusterScopedMixin, query_validated
from .serializers import (
    BrokerRowSerializer,
    ClusterHealthSerializer,
    PartitionQuerySerializer,
    PartitionSerializer,
    TopicRowSerializer,
)


class ClusterListView(APIView):
    @extend_schema(responses=ClusterHealthSerializer(many=True))
    def get(self, request: Request) -> Response:
        healths = cluster_health_list(user=request.user)
        return Response(ClusterHealthSerializer(healths, many=True).data)


class ClusterDetailView(ClusterScopedMixin, APIView):
    @extend_schema(responses=ClusterHealthSerializer)
    def get(self, request: Request, name: str) -> Response:
        health = cluster_health_get(cluster=self.cluster_get())
        return Response(ClusterHealthSerializer(health).data)


class BrokerListView(ClusterScopedMixin, APIView):
    @extend_schema(responses=BrokerRowSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        rows = broker_rows_list(cluster=self.cluster_get())
        return Response(BrokerRowSerializer(rows, many=True).data)


class TopicListView(ClusterScopedMixin, APIView):
    @extend_schema(responses=TopicRowSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        rows = topic_rows_list(cluster=self.cluster_get())
        return Response(TopicRowSerializer(rows, many=True).data)


class PartitionListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = PartitionSerializer

    @extend_schema(parameters=[PartitionQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = query_validated(PartitionQuerySerializer, self.request)
        return partitions_filter(
            cluster=self.cluster_get(), topic=query.get("topic", ""), broker=query.get("broker")
        )
