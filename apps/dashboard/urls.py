from django.urls import path, re_path

from apps.core.url_converters import url_converters_register

from . import (
    views,
    views_access,
    views_clusters,
    views_drains,
    views_live,
    views_notifications,
)

app_name = "dashboard"
url_converters_register()

urlpatterns = [
    path("", views.clusters_page, name="clusters"),
    path("clusters/new/", views_clusters.cluster_add, name="cluster-add"),
    path("clusters/<slug:name>/", views.cluster_page, name="cluster"),
    path("clusters/<slug:name>/live/", views_live.cluster_live_regions, name="cluster-live"),
    path("clusters/<slug:name>/edit/", views_clusters.cluster_edit, name="cluster-edit"),
    path("clusters/<slug:name>/remove/", views_clusters.cluster_remove, name="cluster-remove"),
    path("clusters/<slug:name>/policy/", views_clusters.cluster_policy, name="cluster-policy"),
    path(
        "clusters/<slug:name>/brokers/<broker:node_id>/undrain/",
        views_drains.broker_undrain_view,
        name="broker-undrain",
    ),
    path(
        "clusters/<slug:name>/brokers/<broker:node_id>/undemote/",
        views_drains.broker_undemote_view,
        name="broker-undemote",
    ),
    path("clusters/<slug:name>/plans/<int:plan_id>/", views.plan_page, name="plan"),
    path("clusters/<slug:name>/plans/<int:plan_id>/loads/", views.plan_loads, name="plan-loads"),
    path("clusters/<slug:name>/what-if/", views.whatif_page, name="what-if"),
    path("audit/", views.audit_page, name="audit"),
    re_path(r"^audit/export\.(?P<fmt>csv|json)$", views.audit_export, name="audit-export"),
    path("access/", views_access.access_page, name="access"),
    path("access/<int:grant_id>/revoke/", views_access.access_revoke, name="access-revoke"),
    path("notifications/", views_notifications.notifications_page, name="notifications"),
    path(
        "notifications/<int:channel_id>/test/",
        views_notifications.notification_test,
        name="notification-test",
    ),
]
