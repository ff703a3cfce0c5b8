from django.urls import path, re_path

from . import views

app_name = "plans"

urlpatterns = [
    path("plans/", views.plan_list, name="list"),
    path("plans/request", views.plan_request_view, name="request"),
    path("plans/<int:plan_id>/", views.plan_detail, name="detail"),
    path("plans/<int:plan_id>/approve", views.plan_approve_view, name="approve"),
    path("plans/<int:plan_id>/reject", views.plan_reject_view, name="reject"),
    path("plans/<int:plan_id>/cancel", views.plan_cancel_view, name="cancel"),
    path("plans/<int:plan_id>/rollback", views.plan_rollback_view, name="rollback"),
    re_path(
        r"^plans/(?P<plan_id>\d+)/(?P<which>reassignment|rollback)\.json$",
        views.plan_export,
        name="export",
    ),
]
