"""The sign-in page: the password form while LOCAL_SIGN_IN is on, the single sign-on
button while an OIDC client is configured."""

from django.conf import settings
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden


class SignInView(LoginView):
    def get_context_data(self, **kwargs) -> dict:
        context = super().get_context_data(**kwargs)
        context["local_sign_in"] = settings.LOCAL_SIGN_IN
        context["sso_enabled"] = bool(settings.OIDC_RP_CLIENT_ID)
        context["sso_failed"] = self.request.GET.get("sso") == "failed"
        return context

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not settings.LOCAL_SIGN_IN:
            return HttpResponseForbidden("Password sign-in is switched off: use single sign-on.")
        return super().post(request, *args, **kwargs)
