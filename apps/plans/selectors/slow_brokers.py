"""Brokers the canary found slow through no load of their own."""

from apps.clusters.models import Cluster

from ..models import SlowBroker


def slow_brokers_get(*, cluster: Cluster) -> dict[int, str]:
    """{broker id: why the canary finds it slow}."""
    return dict(SlowBroker.objects.filter(cluster=cluster).values_list("node_id", "reason"))
