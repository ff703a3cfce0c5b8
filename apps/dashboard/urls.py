from django.urls import path

from . import views

app_name = "dashboard"

urlpatterns = [
    path("", views.clusters_page, name="clusters"),
    path("clusters/<slug:name>/", views.cluster_page, name="cluster"),
    path("clusters/<slug:name>/plans/<int:plan_id>/", views.plan_page, name="plan"),
    path("clusters/<slug:name>/what-if/", views.whatif_page, name="what-if"),
]
