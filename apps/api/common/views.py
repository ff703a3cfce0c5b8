"""The views' shared steps: validating a query, resolving the cluster, answering a refusal."""

from django.http import Http404
from django.urls import reverse
from rest_framework.request import Request
from rest_framework.response import Response

from apps.clusters.models import Cluster
from apps.clusters.selectors import cluster_visible_get
from apps.plans.errors import PlanServiceError


def query_validated(serializer_class, request: Request) -> dict:
    """Validated query parameters; a bad one answers 400 naming it."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class ClusterScopedMixin:
    """Resolves <name> to a cluster the user may see; 404 otherwise."""

    def cluster_get(self) -> Cluster:
        cluster = cluster_visible_get(user=self.request.user, name=self.kwargs["name"])
        if cluster is None:
            raise Http404("no such cluster")
        return cluster


def refused(exc: PlanServiceError) -> Response:
    """A service's refusal: its status with its message (the ErrorSerializer shape)."""
    body: dict = {"detail": str(exc)}
    newer = getattr(exc, "newer_plan_id", None)
    if newer is not None:
        # The proposal to review instead of a superseded or stale one (its API resource).
        body["newer_plan"] = {"id": newer, "url": reverse("api:plan", kwargs={"plan_id": newer})}
    return Response(body, status=exc.status_code)
