"""What each channel kind receives for an event."""

import json
from datetime import UTC, datetime

from apps.notifications.events import Event, bytes_text, event_payload
from apps.notifications.models import ChannelKind
from apps.notifications.payloads import request_body

EVENT = Event(
    kind="broker.dead",
    cluster_id=4,
    cluster_name="prod",
    occurred_at=datetime(2026, 5, 1, 12, 0, 1, tzinfo=UTC),
    summary="[prod] Broker 3 (k3:9092) is dead <&>",
    data={"broker": 3},
    url="https://balancer.example.com/clusters/prod/",
)


def test_it_gives_webhooks_the_whole_event_as_json():
    payload = event_payload(event=EVENT, event_id="e-1")

    body = json.loads(request_body(kind=ChannelKind.WEBHOOK, payload=payload))

    assert body == {
        "id": "e-1",
        "event": "broker.dead",
        "occurred_at": "2026-05-01T12:00:01+00:00",
        "cluster": {"id": 4, "name": "prod"},
        "summary": "[prod] Broker 3 (k3:9092) is dead <&>",
        "url": "https://balancer.example.com/clusters/prod/",
        "data": {"broker": 3},
    }


def test_it_gives_slack_one_escaped_line_with_the_link():
    payload = event_payload(event=EVENT, event_id="e-1")

    body = json.loads(request_body(kind=ChannelKind.SLACK, payload=payload))

    assert body == {
        "text": "[prod] Broker 3 (k3:9092) is dead &lt;&amp;&gt; "
        "<https://balancer.example.com/clusters/prod/|open>"
    }


def test_it_leaves_the_link_out_when_there_is_none():
    payload = event_payload(event=EVENT, event_id="e-1") | {"url": None}

    body = json.loads(request_body(kind=ChannelKind.SLACK, payload=payload))

    assert "<http" not in body["text"] and "\n" not in body["text"]


def test_it_names_sizes_in_binary_units():
    assert [bytes_text(n) for n in (0, 1023, 1024, 3 * 1024**3 // 2)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 GiB",
    ]
