from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.staticfiles.urls import staticfiles_urlpatterns
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    # Browsers ask for /favicon.ico on pages that name none (admin, API docs).
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("apps.api.urls")),
    # Liveness, readiness, status and Prometheus metrics, for the operator's monitoring.
    path("", include("apps.monitoring.urls")),
    # Every page is the dashboard's; actions go through the API.
    path("", include("apps.dashboard.urls")),
]
# Daphne serves no static files itself: with DEBUG on (make run) Django does.
urlpatterns += staticfiles_urlpatterns()
