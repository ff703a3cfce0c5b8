"""The bytes each channel kind is sent for an event payload (see events.event_payload)."""

import json
from typing import Any

from .models import ChannelKind


def _slack_escape(text: str) -> str:
    # Slack's mrkdwn treats these three as control characters.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_text(payload: dict[str, Any]) -> str:
    """One readable line; the page link, when there is one, as Slack's <url|label>."""
    text = _slack_escape(payload["summary"])
    if payload.get("url"):
        text += f" <{payload['url']}|open>"
    return text


def request_body(*, kind: str, payload: dict[str, Any]) -> bytes:
    if kind == ChannelKind.SLACK:
        document: dict[str, Any] = {"text": slack_text(payload)}
    else:
        document = payload
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
