"""The API's routes, each to its domain package's view."""

from django.urls import path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerView,
)

from apps.core.url_converters import url_converters_register

from .audit import views as audit
from .canary import views as canary
from .clusters import views as clusters
from .demotions import views as demotions
from .drains import views as drains
from .metrics import views as metrics
from .plans import views as plans
from .tokens import views as tokens
from .whatif import views as whatif

app_name = "api"
url_converters_register()

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
    path("auth/token/", tokens.TokenObtainView.as_view(), name="token"),
    path("auth/token/revoke/", tokens.TokenRevokeView.as_view(), name="token-revoke"),
    path("clusters/", clusters.ClusterListView.as_view(), name="clusters"),
    path("clusters/<slug:name>/", clusters.ClusterDetailView.as_view(), name="cluster"),
    path("clusters/<slug:name>/brokers/", clusters.BrokerListView.as_view(), name="brokers"),
    path(
        "clusters/<slug:name>/drained-brokers/",
        drains.DrainedBrokerListView.as_view(),
        name="drained-brokers",
    ),
    path(
        "clusters/<slug:name>/drained-brokers/<broker:node_id>/undrain/",
        drains.BrokerUndrainView.as_view(),
        name="broker-undrain",
    ),
    path(
        "clusters/<slug:name>/demoted-brokers/",
        demotions.DemotedBrokerListView.as_view(),
        name="demoted-brokers",
    ),
    path(
        "clusters/<slug:name>/demoted-brokers/<broker:node_id>/undemote/",
        demotions.BrokerUndemoteView.as_view(),
        name="broker-undemote",
    ),
    path("clusters/<slug:name>/topics/", clusters.TopicListView.as_view(), name="topics"),
    path(
        "clusters/<slug:name>/partitions/", clusters.PartitionListView.as_view(), name="partitions"
    ),
    path("clusters/<slug:name>/heatmap/", metrics.HeatmapView.as_view(), name="heatmap"),
    path("clusters/<slug:name>/traffic/", metrics.TrafficView.as_view(), name="traffic"),
    path("clusters/<slug:name>/canary/", canary.CanaryWindowListView.as_view(), name="canary"),
    path(
        "clusters/<slug:name>/canary/bands/",
        canary.CanaryBandListView.as_view(),
        name="canary-bands",
    ),
    path(
        "clusters/<slug:name>/loads/brokers/",
        metrics.BrokerLoadListView.as_view(),
        name="broker-loads",
    ),
    path(
        "clusters/<slug:name>/loads/partitions/",
        metrics.PartitionLoadListView.as_view(),
        name="partition-loads",
    ),
    path("clusters/<slug:name>/plans/", plans.PlanListView.as_view(), name="plans"),
    path("clusters/<slug:name>/what-if/", whatif.WhatIfView.as_view(), name="what-if"),
    path("plans/<int:plan_id>/", plans.PlanDetailView.as_view(), name="plan"),
    path("plans/<int:plan_id>/moves/", plans.PlanMoveListView.as_view(), name="plan-moves"),
    path(
        "plans/<int:plan_id>/throttle/",
        plans.PlanThrottleTraceView.as_view(),
        name="plan-throttle",
    ),
    path("plans/<int:plan_id>/reassignment/", plans.PlanExportView.as_view(), name="plan-export"),
    path("plans/<int:plan_id>/approve/", plans.PlanApproveView.as_view(), name="plan-approve"),
    path("plans/<int:plan_id>/reject/", plans.PlanRejectView.as_view(), name="plan-reject"),
    path("plans/<int:plan_id>/execute/", plans.PlanExecuteView.as_view(), name="plan-execute"),
    path("plans/<int:plan_id>/cancel/", plans.PlanCancelView.as_view(), name="plan-cancel"),
    path("plans/<int:plan_id>/pause/", plans.PlanPauseView.as_view(), name="plan-pause"),
    path("plans/<int:plan_id>/resume/", plans.PlanResumeView.as_view(), name="plan-resume"),
    path("plans/<int:plan_id>/tune/", plans.PlanTuneView.as_view(), name="plan-tune"),
    path("plans/<int:plan_id>/rollback/", plans.PlanRollbackView.as_view(), name="plan-rollback"),
    path("audit/", audit.AuditEventListView.as_view(), name="audit"),
]
