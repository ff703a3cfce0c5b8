"""System check: single sign-on misconfigured (a malformed OIDC_GROUP_GRANTS, a client
id without the provider's endpoints) stops the start, not the first sign-in."""

from django.conf import settings
from django.core.checks import Error, Tags, register
from django.core.exceptions import ImproperlyConfigured

from .services.oidc_grants import oidc_group_grants_parse


@register(Tags.security)
def oidc_settings_check(app_configs, **kwargs) -> list[Error]:
    errors = []
    try:
        oidc_group_grants_parse(text=settings.OIDC_GROUP_GRANTS)
    except ImproperlyConfigured as exc:
        errors.append(Error(str(exc), id="access.E001"))
    if settings.OIDC_RP_CLIENT_ID:
        endpoints = {
            "OIDC_OP_AUTHORIZATION_ENDPOINT": settings.OIDC_OP_AUTHORIZATION_ENDPOINT,
            "OIDC_OP_TOKEN_ENDPOINT": settings.OIDC_OP_TOKEN_ENDPOINT,
            "OIDC_OP_USER_ENDPOINT": settings.OIDC_OP_USER_ENDPOINT,
            "OIDC_OP_JWKS_ENDPOINT": settings.OIDC_OP_JWKS_ENDPOINT,
        }
        missing = [name for name, url in endpoints.items() if not url]
        if missing:
            errors.append(
                Error(
                    f"single sign-on is on (OIDC_RP_CLIENT_ID) but {', '.join(missing)} is empty",
                    id="access.E002",
                )
            )
    return errors
