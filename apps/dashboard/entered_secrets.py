"""Secrets typed on the cluster form and not stored yet, kept between its submits (Test
connection, then Save) in the user's server-side session, encrypted with the cluster
secrets' keys. The page carries only a random reference to them, never a secret."""

import secrets

from django.http import HttpRequest

from apps.core.secrets import SecretDecryptError, secret_decrypt, secret_encrypt

SESSION_KEY = "cluster_form_entered_secrets"
FIELD = "entered_secrets"
# References kept per session (forms open in several tabs); the oldest go first.
KEPT = 8


def entered_secrets_get(*, request: HttpRequest) -> dict[str, str]:
    """The secrets the submitted form's reference points to ({} for none or unknown)."""
    kept = request.session.get(SESSION_KEY, {}).get(request.POST.get(FIELD, ""), {})
    try:
        return {name: secret_decrypt(token) for name, token in kept.items()}
    except SecretDecryptError:
        return {}


def entered_secrets_put(*, request: HttpRequest, values: dict[str, str]) -> str:
    """Keep `values` for the next submit; the reference the page sends back ("" for none)."""
    entered_secrets_drop(request=request)
    if not values:
        return ""
    reference = secrets.token_urlsafe(16)
    kept = dict(request.session.get(SESSION_KEY, {}))
    kept[reference] = {name: secret_encrypt(value) for name, value in values.items()}
    request.session[SESSION_KEY] = dict(list(kept.items())[-KEPT:])
    return reference


def entered_secrets_drop(*, request: HttpRequest) -> None:
    """Forget what the submitted form's reference points to."""
    kept = dict(request.session.get(SESSION_KEY, {}))
    if kept.pop(request.POST.get(FIELD, ""), None) is not None:
        request.session[SESSION_KEY] = kept
