"""Liveness, readiness, the status of every dependency, and /metrics."""

import hmac

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from health_check.views import HealthCheckView
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import CollectorRegistry
from redis.asyncio import Redis as AsyncRedis

from apps.clusters.selectors import clusters_list

from .collector import BalancerCollector
from .health import BeatHeartbeat, ClusterSynced

_DEPENDENCIES = (
    "health_check.checks.Database",
    (
        "health_check.contrib.redis.Redis",
        {"client_factory": lambda: AsyncRedis.from_url(settings.REDIS_URL)},
    ),
)


@never_cache
@require_GET
def liveness(request: HttpRequest) -> HttpResponse:
    """The process answers: nothing else is asked (a restart cures nothing more)."""
    return HttpResponse("ok\n", content_type="text/plain")


class ReadinessView(HealthCheckView):
    """Ready to serve: the database and Redis answer. A Kafka cluster that does not is
    the cluster's problem, not this process's; /health/ says so."""

    checks = _DEPENDENCIES


class StatusView(HealthCheckView):
    """Every dependency: the database, Redis, beat's heartbeat (a worker ran it), and
    each cluster's last sync."""

    async def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        # The view runs its checks on the event loop: the clusters are read before.
        self.clusters = await sync_to_async(clusters_list)()
        return await super().get(request, *args, **kwargs)

    def get_checks(self):
        yield from super().get_checks()
        yield BeatHeartbeat()
        for cluster in self.clusters:
            yield ClusterSynced(cluster=cluster.name, synced_at=cluster.last_synced_at)

    checks = _DEPENDENCIES


@never_cache
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """Prometheus text format. With METRICS_TOKEN set, only for `Authorization: Bearer
    <token>`."""
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            return HttpResponse("unauthorized\n", status=401, content_type="text/plain")
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BalancerCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
