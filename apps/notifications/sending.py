"""One POST of an event payload to one channel: body, signature, timeout, and a verdict
(delivered, worth retrying, or not), with every error text stripped of the channel's
URL path and secret.
"""

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests

from .models import ChannelKind, NotificationChannel
from .payloads import request_body
from .signing import signature_headers

USER_AGENT = "kafka-balancer-notifications/1"
REDACTED = "[redacted]"
# Statuses that say "try again later"; any other non-2xx is a configuration problem
# (wrong URL, revoked token, refused payload) that a retry would not fix.
RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
# Characters of a refused response's body kept in the log.
BODY_EXCERPT = 200


@dataclass(frozen=True)
class SendResult:
    ok: bool
    status_code: int | None
    error: str
    retryable: bool
    duration_ms: int


def redact(text: str, *, url: str, secret: str = "") -> str:
    """`text` without the channel's URL, its path, query and credentials, or secret."""
    parts = urlsplit(url)
    sensitive = [url, secret, parts.query, parts.password or ""]
    if len(parts.path) > 1:
        sensitive.append(parts.path)
    for value in sorted((v for v in sensitive if v), key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def status_retryable(status_code: int) -> bool:
    return status_code in RETRYABLE_STATUSES or status_code >= 500


def event_send(
    *, channel: NotificationChannel, payload: dict[str, Any], timeout: float
) -> SendResult:
    """POST `payload` to `channel`; never raises for a network or HTTP failure."""
    body = request_body(kind=channel.kind, payload=payload)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Balancer-Event": payload["event"],
        "X-Balancer-Delivery": payload["id"],
    }
    if channel.kind == ChannelKind.WEBHOOK:
        headers |= signature_headers(secret=channel.secret, timestamp=int(time.time()), body=body)
    started = time.monotonic()

    def result(ok: bool, status: int | None, error: str, retryable: bool) -> SendResult:
        return SendResult(
            ok=ok,
            status_code=status,
            error=redact(error, url=channel.url, secret=channel.secret),
            retryable=retryable,
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    if not channel.url:
        return result(False, None, "the channel has no readable URL: enter it again", False)
    try:
        # Redirects are not followed: a signed body goes only where it was configured to.
        response = requests.post(
            channel.url, data=body, headers=headers, timeout=timeout, allow_redirects=False
        )
    except requests.Timeout:
        return result(False, None, f"no answer within {timeout:g} s", True)
    except (
        requests.exceptions.InvalidURL,
        requests.exceptions.InvalidSchema,
        requests.exceptions.MissingSchema,
    ) as exc:
        return result(False, None, f"{exc.__class__.__name__}: {exc}", False)
    except requests.RequestException as exc:
        return result(False, None, f"{exc.__class__.__name__}: {exc}", True)
    if 200 <= response.status_code < 300:
        return result(True, response.status_code, "", False)
    excerpt = " ".join(response.text[:BODY_EXCERPT].split())
    error = f"HTTP {response.status_code}" + (f": {excerpt}" if excerpt else "")
    return result(False, response.status_code, error, status_retryable(response.status_code))
