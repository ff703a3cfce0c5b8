"""A bad websocket frame (not JSON, not an object, too large, binary, nested too deep)
closes the socket with 4400 and one log line, no traceback (unchecked, a non-JSON
frame raises in the consumer: a traceback and close 1011)."""

import logging

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from devkit.users import user_make

from apps.dashboard.consumers import CLOSE_BAD_FRAME, FRAME_MAX_BYTES
from balancer_site.asgi import application
from tests.support.factories import cluster_make

IN_MEMORY = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

BAD_FRAMES = {
    "not JSON": {"text_data": "hello"},
    "not an object": {"text_data": "[1, 2]"},
    "too large": {"text_data": '{"x": "' + "y" * FRAME_MAX_BYTES + '"}'},
    "binary": {"bytes_data": b"\x00\x01"},
    "nested too deep": {"text_data": "[" * 3000 + "]" * 3000},
}


async def close_after(socket: WebsocketCommunicator, frame: dict) -> int:
    connected, _ = await socket.connect()
    assert connected
    assert (await socket.receive_json_from(timeout=5))["type"] == "hello"
    if "bytes_data" in frame:
        await socket.send_to(bytes_data=frame["bytes_data"])
    else:
        await socket.send_to(text_data=frame["text_data"])
    message = await socket.receive_output(timeout=5)
    assert message["type"] == "websocket.close", message
    return message["code"]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("frame", list(BAD_FRAMES.values()), ids=list(BAD_FRAMES))
def test_it_closes_a_socket_on_a_bad_frame(client, settings, caplog, frame):
    settings.CHANNEL_LAYERS = IN_MEMORY
    cluster_make()
    client.force_login(user_make("vic", "viewer"))
    socket = WebsocketCommunicator(
        application,
        "/ws/clusters/prod/",
        headers=[
            (b"origin", b"http://127.0.0.1"),
            (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()),
        ],
    )

    with caplog.at_level(logging.INFO):
        assert async_to_sync(close_after)(socket, frame) == CLOSE_BAD_FRAME

    lines = [r for r in caplog.records if r.name == "apps.dashboard.consumers"]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
