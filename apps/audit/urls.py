from django.urls import path, re_path

from . import views

app_name = "audit"

urlpatterns = [
    path("audit/", views.event_list, name="list"),
    re_path(r"^audit/export\.(?P<fmt>csv|json)$", views.event_export, name="export"),
]
