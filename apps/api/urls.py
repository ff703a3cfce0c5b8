from django.urls import path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
)

from . import views

app_name = "api"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    path("auth/token/", views.TokenObtainView.as_view(), name="token"),
    path("auth/token/revoke/", views.TokenRevokeView.as_view(), name="token-revoke"),
    path("clusters/", views.ClusterListView.as_view(), name="clusters"),
    path("clusters/<slug:name>/", views.ClusterDetailView.as_view(), name="cluster"),
    path("clusters/<slug:name>/brokers/", views.BrokerListView.as_view(), name="brokers"),
    path(
        "clusters/<slug:name>/drained-brokers/",
        views.DrainedBrokerListView.as_view(),
        name="drained-brokers",
    ),
    path(
        "clusters/<slug:name>/drained-brokers/<int:node_id>/undrain/",
        views.BrokerUndrainView.as_view(),
        name="broker-undrain",
    ),
    path("clusters/<slug:name>/topics/", views.TopicListView.as_view(), name="topics"),
    path("clusters/<slug:name>/partitions/", views.PartitionListView.as_view(), name="partitions"),
    path("clusters/<slug:name>/heatmap/", views.HeatmapView.as_view(), name="heatmap"),
    path("clusters/<slug:name>/traffic/", views.TrafficView.as_view(), name="traffic"),
    path(
        "clusters/<slug:name>/loads/brokers/",
        views.BrokerLoadListView.as_view(),
        name="broker-loads",
    ),
    path(
        "clusters/<slug:name>/loads/partitions/",
        views.PartitionLoadListView.as_view(),
        name="partition-loads",
    ),
    path("clusters/<slug:name>/plans/", views.PlanListView.as_view(), name="plans"),
    path("clusters/<slug:name>/what-if/", views.WhatIfView.as_view(), name="what-if"),
    path("plans/<int:plan_id>/", views.PlanDetailView.as_view(), name="plan"),
    path("plans/<int:plan_id>/moves/", views.PlanMoveListView.as_view(), name="plan-moves"),
    path("plans/<int:plan_id>/reassignment/", views.PlanExportView.as_view(), name="plan-export"),
    path("plans/<int:plan_id>/approve/", views.PlanApproveView.as_view(), name="plan-approve"),
    path("plans/<int:plan_id>/reject/", views.PlanRejectView.as_view(), name="plan-reject"),
    path("plans/<int:plan_id>/execute/", views.PlanExecuteView.as_view(), name="plan-execute"),
    path("plans/<int:plan_id>/cancel/", views.PlanCancelView.as_view(), name="plan-cancel"),
    path("plans/<int:plan_id>/pause/", views.PlanPauseView.as_view(), name="plan-pause"),
    path("plans/<int:plan_id>/resume/", views.PlanResumeView.as_view(), name="plan-resume"),
    path("plans/<int:plan_id>/tune/", views.PlanTuneView.as_view(), name="plan-tune"),
    path("plans/<int:plan_id>/rollback/", views.PlanRollbackView.as_view(), name="plan-rollback"),
    path("audit/", views.AuditEventListView.as_view(), name="audit"),
]
