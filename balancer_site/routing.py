# Websocket routes; each app contributes its consumers here (one consumer per concern).
websocket_urlpatterns: list = []
