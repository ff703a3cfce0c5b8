"""HMAC-SHA256 signatures of JSON webhook bodies.

The signed message is `<timestamp>.<body>`: a receiver that checks the timestamp is
recent (and the signature) refuses a captured request replayed later.
`signature_verify` is the reference check a receiver can copy (docs/notifications.md).
"""

import hashlib
import hmac

SIGNATURE_HEADER = "X-Balancer-Signature"
TIMESTAMP_HEADER = "X-Balancer-Timestamp"
SIGNATURE_PREFIX = "sha256="
# How old a signed request a receiver should still accept, in seconds.
REPLAY_TOLERANCE = 300


def signature_compute(*, secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return SIGNATURE_PREFIX + hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_headers(*, secret: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature_compute(secret=secret, timestamp=timestamp, body=body),
    }


def signature_verify(
    *,
    secret: str,
    body: bytes,
    timestamp: str | None,
    signature: str | None,
    now: float,
    tolerance: int = REPLAY_TOLERANCE,
) -> bool:
    """True when `signature` signs `timestamp.body` with `secret` and is recent."""
    if not timestamp or not signature or not timestamp.isdigit():
        return False
    if abs(now - int(timestamp)) > tolerance:
        return False
    expected = signature_compute(secret=secret, timestamp=int(timestamp), body=body)
    return hmac.compare_digest(expected, signature)
