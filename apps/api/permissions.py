"""The UI's permissions, enforced on the API: one source, apps.clusters.selectors."""

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from apps.access.selectors import user_holds_anywhere
from apps.clusters.selectors import user_may_see_clusters


class CanViewClusters(BasePermission):
    """Every endpoint: a signed-in, active user with a grant on some cluster (any role);
    each view narrows to the clusters granted."""

    message = "You may not see clusters (no viewer, operator, approver or admin role)."

    def has_permission(self, request: Request, view) -> bool:
        return user_may_see_clusters(user=request.user)


AUDIT_VIEW = "audit.view_auditevent"


class CanViewAudit(BasePermission):
    message = "You may not read the audit trail."

    def has_permission(self, request: Request, view) -> bool:
        return user_holds_anywhere(user=request.user, perm=AUDIT_VIEW)
