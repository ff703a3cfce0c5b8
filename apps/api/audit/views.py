"""The audit view: the trail, filtered, for users who may read it."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from apps.audit.selectors import audit_events_explore
from apps.clusters.selectors import cluster_ids_with, cluster_visible_get
from apps.plans.selectors import cluster_audited_objects

from ..common.views import query_validated
from ..permissions import AUDIT_VIEW, CanViewAudit, CanViewClusters
from .serializers import AuditEventSerializer, AuditQuerySerializer


class AuditEventListView(generics.ListAPIView):
    """The audit trail, newest first: filter by cluster, actor, action (prefix), time."""

    serializer_class = AuditEventSerializer
    permission_classes = [CanViewClusters, CanViewAudit]

    @extend_schema(parameters=[AuditQuerySerializer])
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        query = query_validated(AuditQuerySerializer, self.request)
        about = None
        if "cluster" in query:
            cluster = cluster_visible_get(user=self.request.user, name=query.pop("cluster"))
            if cluster is None:
                raise ValidationError({"cluster": "no such cluster"})
            about = cluster_audited_objects(cluster=cluster)
        visible = cluster_ids_with(user=self.request.user, perm=AUDIT_VIEW)
        return audit_events_explore(about=about, cluster_ids=visible, **query)
