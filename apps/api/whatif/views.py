"""The what-if view: a simulated change to a cluster, answered without proposing a plan."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.plans.errors import PlanServiceError
from apps.plans.whatif import whatif_simulate

from ..common.serializers import ErrorSerializer
from ..common.views import ClusterScopedMixin, refused
from .serializers import WhatIfRequestSerializer, WhatIfSerializer


class WhatIfView(ClusterScopedMixin, APIView):
    """Simulate brokers added / removed or traffic scaled; proposes nothing."""

    @extend_schema(
        request=WhatIfRequestSerializer,
        responses={200: WhatIfSerializer, 400: ErrorSerializer},
    )
    def post(self, request: Request, name: str) -> Response:
        cluster = self.cluster_get()
        body = WhatIfRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            result = whatif_simulate(cluster=cluster, **body.validated_data)
        except PlanServiceError as exc:
            return refused(exc)
        return Response(WhatIfSerializer(result).data)
