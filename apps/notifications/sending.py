"""One POST of an event payload to one channel: body, signature, timeout, and a verdict
(delivered, worth retrying, or not). The POST goes only to a checked public address
(outbound.py); the error text is one short line (the HTTP status, never the answer's
body) stripped of the channel's URL path and secret.
"""

import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import requests

from apps.core.secrets import SecretDecryptError

from .models import ChannelKind, NotificationChannel
from .outbound import OutboundRefused, OutboundUnresolved, session_checked
from .payloads import request_body
from .signing import signature_headers

USER_AGENT = "kafka-balancer-notifications/1"
REDACTED = "[redacted]"
# Statuses that say "try again later"; any other non-2xx is a configuration problem
# (wrong URL, revoked token, refused payload) that a retry would not fix.
RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
# Characters of a connection failure's reason kept: one line in the log.
REASON_LENGTH = 160


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


def status_line(status_code: int) -> str:
    """What an operator reads of a refused answer: its status, never its body (an internal
    page read through a webhook must not come back in the log)."""
    try:
        line = f"HTTP {status_code} {HTTPStatus(status_code).phrase}"
    except ValueError:
        line = f"HTTP {status_code}"
    if 300 <= status_code < 400:
        line += ": redirects are not followed; enter the final URL"
    return line


def status_retryable(status_code: int) -> bool:
    return status_code in RETRYABLE_STATUSES or status_code >= 500


def _network_reason(exc: BaseException) -> str:
    """The operating system's reason ("Connection refused"), if the chain carries one."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.strerror:
            return f" ({current.strerror[:REASON_LENGTH]})"
        stack.extend(a for a in current.args if isinstance(a, BaseException))
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        reason = getattr(current, "reason", None)
        if isinstance(reason, BaseException):
            stack.append(reason)
    return ""


def event_send(
    *, channel: NotificationChannel, payload: dict[str, Any], timeout: float
) -> SendResult:
    """POST `payload` to `channel`; never raises for a network or HTTP failure. A disabled
    channel is sent nothing."""
    started = time.monotonic()
    try:
        url, secret = channel.url, channel.secret
    except SecretDecryptError:
        error = "the channel's URL or secret does not decrypt with BALANCER_SECRET_KEYS"
        return SendResult(False, None, f"{error}: enter them again", False, 0)

    def result(ok: bool, status: int | None, error: str, retryable: bool) -> SendResult:
        return SendResult(
            ok=ok,
            status_code=status,
            error=redact(error, url=url, secret=secret),
            retryable=retryable,
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    if not channel.enabled:
        return result(False, None, "the channel is disabled: nothing was sent", False)
    if not url:
        return result(False, None, "the channel has no readable URL: enter it again", False)
    body = request_body(kind=channel.kind, payload=payload)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Balancer-Event": payload["event"],
        "X-Balancer-Delivery": payload["id"],
    }
    if channel.kind == ChannelKind.WEBHOOK:
        headers |= signature_headers(secret=secret, timestamp=int(time.time()), body=body)
    try:
        # Redirects are not followed: a signed body goes only where it was configured to.
        with session_checked() as session:
            response = session.post(
                url, data=body, headers=headers, timeout=timeout, allow_redirects=False
            )
    except OutboundUnresolved as exc:
        return result(False, None, str(exc), True)
    except OutboundRefused as exc:
        return result(False, None, f"refused: {exc}", False)
    except requests.Timeout:
        return result(False, None, f"no answer within {timeout:g} s", True)
    except (
        requests.exceptions.InvalidURL,
        requests.exceptions.InvalidSchema,
        requests.exceptions.MissingSchema,
    ) as exc:
        return result(False, None, f"{exc.__class__.__name__}: the URL cannot be used", False)
    except requests.RequestException as exc:
        reason = _network_reason(exc)
        error = f"{exc.__class__.__name__}: could not reach {channel.url_host}{reason}"
        return result(False, None, error, True)
    if 200 <= response.status_code < 300:
        return result(True, response.status_code, "", False)
    return result(
        False,
        response.status_code,
        status_line(response.status_code),
        status_retryable(response.status_code),
    )
