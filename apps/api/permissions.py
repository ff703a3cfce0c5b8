"""The UI's permissions, enforced on the API: one source, apps.clusters.selectors."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.clusters.selectors import user_may_see_clusters


class CanViewClusters(BasePermission):
    """Every endpoint: a signed-in, active user holding clusters.view_cluster (any role)."""

    message = "You may not see clusters (no viewer, operator, approver or admin role)."

    def has_permission(self, request: Request, view) -> bool:
        return user_may_see_clusters(user=request.user)


class CanViewAudit(BasePermission):
    message = "You may not read the audit trail."

    def has_permission(self, request: Request, view) -> bool:
        return bool(request.user and request.user.has_perm("audit.view_auditevent"))
