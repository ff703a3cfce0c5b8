"""System check: a malformed BALANCER_SECRET_KEYS stops runserver/migrate at start,
not the first time a secret is saved."""

from django.core.checks import Error, Tags, register
from django.core.exceptions import ImproperlyConfigured

from apps.core.secrets import secrets_fernet


@register(Tags.security)
def secret_keys_check(app_configs, **kwargs) -> list[Error]:
    try:
        secrets_fernet()
    except ImproperlyConfigured as exc:
        return [
            Error(
                str(exc),
                hint="Generate one with `manage.py rotate_secrets --generate-key`.",
                id="clusters.E001",
            )
        ]
    return []
