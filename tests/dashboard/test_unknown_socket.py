"""A websocket to a path nothing serves is closed cleanly with 4404, no traceback."""

import logging

import pytest
from asgiref.sync import async_to_sync

from tests.dashboard.test_live import close_code, socket_for


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("path", ["/ws/nothing/", "/", "/ws/clusters/prod/plans/extra/"])
def test_it_closes_a_socket_to_an_unknown_path(client, viewer, path, caplog, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    with caplog.at_level(logging.ERROR):
        assert async_to_sync(close_code)(socket_for(client, viewer, path)) == 4404
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
