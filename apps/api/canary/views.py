"""The canary's rounds of a cluster (what a client of each broker felt) and each
broker's band."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response

from apps.canary.selectors import canary_bands, canary_windows_filter

from ..common.views import ClusterScopedMixin, query_validated
from .serializers import CanaryBandSerializer, CanaryQuerySerializer, CanaryWindowSerializer


class CanaryWindowListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = CanaryWindowSerializer

    @extend_schema(parameters=[CanaryQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = query_validated(CanaryQuerySerializer, self.request)
        return canary_windows_filter(
            cluster=self.cluster_get(), since=query.get("since"), until=query.get("until")
        )


class CanaryBandListView(ClusterScopedMixin, generics.ListAPIView):
    serializer_class = CanaryBandSerializer
    pagination_class = None

    def get_queryset(self):
        return canary_bands(cluster=self.cluster_get())
