# Websocket routes; each app contributes its consumers here (one consumer per concern).
from channels.generic.websocket import WebsocketConsumer
from django.urls import re_path

from apps.dashboard.routing import websocket_urlpatterns as dashboard_patterns

# Close code of a socket to a path nothing serves (as the consumers' 4404 for an
# unknown cluster): the browser knows not to reconnect.
CLOSE_NO_SUCH_PATH = 4404


class UnknownPathConsumer(WebsocketConsumer):
    """Any other path: accepted and closed at once, not a routing error and a traceback."""

    def connect(self) -> None:
        self.accept()
        self.close(code=CLOSE_NO_SUCH_PATH)


websocket_urlpatterns: list = [*dashboard_patterns, re_path(r"", UnknownPathConsumer.as_asgi())]
