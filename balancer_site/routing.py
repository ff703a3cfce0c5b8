# Websocket routes; each app contributes its consumers here (one consumer per concern).
from apps.dashboard.routing import websocket_urlpatterns as dashboard_patterns

websocket_urlpatterns: list = [*dashboard_patterns]
