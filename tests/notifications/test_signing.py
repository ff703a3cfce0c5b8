"""Webhook signatures: HMAC-SHA256 over `<timestamp>.<body>`, checked with a replay window."""

import hashlib
import hmac

from apps.notifications.signing import (
    REPLAY_TOLERANCE,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    signature_headers,
    signature_verify,
)

BODY = b'{"event":"plan.proposed"}'
NOW = 1_800_000_000


def test_it_signs_the_timestamp_and_the_body_with_hmac_sha256():
    headers = signature_headers(secret="k" * 32, timestamp=NOW, body=BODY)

    expected = hmac.new(b"k" * 32, f"{NOW}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert headers == {TIMESTAMP_HEADER: str(NOW), SIGNATURE_HEADER: f"sha256={expected}"}


def test_it_accepts_its_own_fresh_signature():
    headers = signature_headers(secret="k" * 32, timestamp=NOW, body=BODY)

    assert signature_verify(
        secret="k" * 32,
        body=BODY,
        timestamp=headers[TIMESTAMP_HEADER],
        signature=headers[SIGNATURE_HEADER],
        now=NOW + 5,
    )


def test_it_refuses_a_changed_body_a_wrong_secret_or_a_moved_timestamp():
    headers = signature_headers(secret="k" * 32, timestamp=NOW, body=BODY)
    signature = headers[SIGNATURE_HEADER]

    def ok(secret="k" * 32, body=BODY, timestamp=str(NOW)):
        return signature_verify(
            secret=secret, body=body, timestamp=timestamp, signature=signature, now=NOW
        )

    assert ok()
    assert not ok(body=BODY + b" ")
    assert not ok(secret="x" * 32)
    # The timestamp is signed: moving it forward to pass the replay window breaks it.
    assert not ok(timestamp=str(NOW + 1))
    assert not ok(timestamp=None)
    assert not ok(timestamp="soon")


def test_it_refuses_a_replay_outside_the_tolerance():
    headers = signature_headers(secret="k" * 32, timestamp=NOW, body=BODY)

    def at(now):
        return signature_verify(
            secret="k" * 32,
            body=BODY,
            timestamp=headers[TIMESTAMP_HEADER],
            signature=headers[SIGNATURE_HEADER],
            now=now,
        )

    assert at(NOW + REPLAY_TOLERANCE)
    assert not at(NOW + REPLAY_TOLERANCE + 1)
