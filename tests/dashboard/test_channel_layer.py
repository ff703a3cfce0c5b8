"""The Redis channel layer keeps an idle receive open (websockets must not churn)."""

import asyncio
import uuid

import pytest
from channels.layers import get_channel_layer

pytestmark = pytest.mark.integration


def test_it_waits_on_an_idle_channel_longer_than_redis_py_socket_timeout(redis_server):
    layer = get_channel_layer()

    async def idle_receive() -> str:
        channel = f"idle-{uuid.uuid4().hex}"
        try:
            # redis-py 8's default socket timeout is 5 s; wait past it.
            await asyncio.wait_for(layer.receive(channel), timeout=6.5)
        except TimeoutError:
            return "still waiting"
        return "message"

    assert asyncio.run(idle_receive()) == "still waiting"
