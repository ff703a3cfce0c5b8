"""The address a request came from, as far as it can be trusted.

Without trusted proxies (TRUSTED_PROXIES=0) it is the socket's peer (REMOTE_ADDR) and
X-Forwarded-For is ignored: anyone can write that header. Behind N proxies that each
append the address they saw to X-Forwarded-For (nginx's $proxy_add_x_forwarded_for,
HAProxy's `option forwardfor`), the N-th entry from the right was written by the
outermost proxy and is the client; entries left of it are the client's own claims.
"""

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def _address_or_none(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


def client_address_get(*, request: HttpRequest | None) -> str | None:
    if request is None:
        return None
    peer = request.META.get("REMOTE_ADDR") or None
    proxies: int = settings.TRUSTED_PROXIES
    if proxies <= 0:
        return peer
    forwarded = [
        part for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()
    ]
    if len(forwarded) < proxies:
        # Fewer entries than proxies: the request skipped a proxy; its peer is all we know.
        return peer
    return _address_or_none(forwarded[-proxies]) or peer


def client_address_for_axes(request: HttpRequest) -> str | None:
    """AXES_CLIENT_IP_CALLABLE: lockouts count the same address the audit trail shows."""
    return client_address_get(request=request)
