from django.urls import path

from . import views

app_name = "monitoring"

urlpatterns = [
    path("healthz", views.liveness, name="liveness"),
    path("readyz", views.ReadinessView.as_view(), name="readiness"),
    path("health/", views.StatusView.as_view(), name="status"),
    path("metrics", views.metrics, name="metrics"),
]
