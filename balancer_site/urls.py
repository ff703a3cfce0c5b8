from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.staticfiles.urls import staticfiles_urlpatterns
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from apps.dashboard.views_signin import SignInView

urlpatterns = [
    # Browsers ask for /favicon.ico on pages that name none (admin, API docs).
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("admin/", admin.site.urls),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/", include("apps.api.urls")),
    # Liveness, readiness, status and Prometheus metrics, for the operator's monitoring.
    path("", include("apps.monitoring.urls")),
    # Every page is the dashboard's; actions go through the API.
    path("", include("apps.dashboard.urls")),
]
if settings.SSO_ENABLED:
    # Single sign-on: /oidc/authenticate/ leaves for the provider, /oidc/callback/ returns.
    urlpatterns.append(path("oidc/", include("mozilla_django_oidc.urls")))
# Daphne serves no static files itself: with DEBUG on (make run) Django does.
urlpatterns += staticfiles_urlpatterns()
