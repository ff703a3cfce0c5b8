"""The four roles and the permissions each holds on the clusters it is granted on.

Permissions come from grants only (backends.GrantBackend): the Django groups named like
the roles carry none themselves; a group is a way to hand a grant to many users.
"""

from enum import StrEnum


class Role(StrEnum):
    VIEWER = "viewer"
    OPERATOR = "operator"
    APPROVER = "approver"
    ADMIN = "admin"


_VIEW = frozenset(
    {
        "plans.view_plan",
        "plans.view_planmove",
        "plans.view_execution",
        "plans.view_clusterpolicy",
        "audit.view_auditevent",
        "clusters.view_cluster",
        "clusters.view_broker",
        "clusters.view_topic",
        "clusters.view_partition",
    }
)

ROLE_PERMISSIONS: dict[Role, frozenset[str]] = {
    Role.VIEWER: _VIEW,
    Role.OPERATOR: _VIEW | {"plans.request_plan", "plans.cancel_plan"},
    Role.APPROVER: _VIEW | {"plans.approve_plan", "plans.reject_plan", "plans.cancel_plan"},
    Role.ADMIN: _VIEW
    | {
        "plans.request_plan",
        "plans.approve_plan",
        "plans.reject_plan",
        "plans.cancel_plan",
        "plans.approve_data_loss",
        "plans.change_clusterpolicy",
        "audit.export_auditevent",
        "clusters.change_broker",
        "clusters.add_cluster",
        "clusters.change_cluster",
        "clusters.delete_cluster",
        "notifications.view_notificationchannel",
        "notifications.add_notificationchannel",
        "notifications.change_notificationchannel",
        "notifications.delete_notificationchannel",
        "notifications.test_notificationchannel",
        "notifications.view_delivery",
        "notifications.view_deliveryattempt",
        "access.view_grant",
        "access.add_grant",
        "access.delete_grant",
    },
}

# Ranks, for "at least approver": every role holds what the ones before it see.
ROLE_ORDER = (Role.VIEWER, Role.OPERATOR, Role.APPROVER, Role.ADMIN)
