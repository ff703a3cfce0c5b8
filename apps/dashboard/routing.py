from django.urls import path

from .consumers import ClusterConsumer, ClustersConsumer, PlansConsumer

websocket_urlpatterns = [
    path("ws/clusters/", ClustersConsumer.as_asgi()),
    path("ws/clusters/<slug:name>/", ClusterConsumer.as_asgi()),
    path("ws/clusters/<slug:name>/plans/", PlansConsumer.as_asgi()),
]
