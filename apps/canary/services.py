"""The canary round of one cluster: keep the canary topic placed, probe every broker,
store what each felt (judged against its band, which steers adaptive throttles and
finds slow brokers), and forget rounds older than the retention."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.clusters.models import Cluster, ClusterRound
from apps.clusters.rounds import round_lease, round_outcome_record
from apps.kafka_layer.authorization import KafkaNotAuthorized
from apps.kafka_layer.canary import BrokerProbe, canary_partition_replicas, canary_topic_ensure
from apps.kafka_layer.clients import KafkaException, admin_client_create
from apps.plans.selectors.drains import brokers_leaving

from .band_updates import canary_bands_update
from .models import CanaryWindow
from .probes import canary_probe_drop, canary_probe_for
from .slowness import canary_slowness_update
from .stats import percentile
from .throttle_feedback import canary_throttle_feedback

logger = logging.getLogger(__name__)


def _window(*, cluster: Cluster, broker: int, at, probe: BrokerProbe) -> CanaryWindow:
    return CanaryWindow(
        cluster=cluster,
        broker_id=broker,
        at=at,
        sent=probe.sent,
        acked=probe.acked,
        received=probe.received,
        errors=probe.errors,
        produce_p50_ms=percentile(probe.produce_ms, 50),
        produce_p99_ms=percentile(probe.produce_ms, 99),
        end_to_end_p50_ms=percentile(probe.end_to_end_ms, 50),
        end_to_end_p99_ms=percentile(probe.end_to_end_ms, 99),
        last_error=probe.last_error[:200],
    )


def canary_round(*, cluster: Cluster) -> list[CanaryWindow] | None:
    """One canary round of `cluster`: its windows, or None when the round did not run
    (the previous one still runs) or could not reach the cluster (`last_error` says why).

    Kafka is talked to outside any transaction; the windows are stored in one insert.
    """
    with round_lease(cluster=cluster, kind=ClusterRound.CANARY) as lease:
        if lease is None:
            return None
        topic = settings.CANARY_TOPIC
        # A broker drained or being drained gets no canary partition: its replicas, the
        # canary's included, move off it, and a new one would put one back.
        leaving = brokers_leaving(cluster=cluster)
        alive = [
            b
            for b in cluster.brokers.filter(alive=True).values_list("node_id", flat=True)
            if b not in leaving
        ]
        try:
            admin = admin_client_create(connection=cluster.connection)
            leaders = canary_topic_ensure(admin=admin, topic=topic, brokers=alive)
            probe = canary_probe_for(cluster=cluster, topic=topic)
            results = probe.probe(
                leaders=leaders,
                records=settings.CANARY_RECORDS,
                timeout=settings.CANARY_TIMEOUT,
            )
            placed = canary_partition_replicas(admin=admin, topic=topic)
        except (KafkaException, KafkaNotAuthorized) as exc:
            canary_probe_drop(cluster=cluster)
            if round_outcome_record(row=lease, error=f"canary: {exc}"):
                logger.warning("cluster %s: canary failed: %s", cluster.name, exc)
            return None
        now = timezone.now()
        windows = [
            _window(cluster=cluster, broker=broker, at=now, probe=result)
            for broker, result in sorted(results.items())
        ]
        CanaryWindow.objects.bulk_create(windows)
        judged = canary_bands_update(cluster=cluster, windows=windows)
        canary_throttle_feedback(cluster=cluster, judged=judged)
        replicas = {b: placed.get(p, [b]) for b, p in leaders.items()}
        canary_slowness_update(cluster=cluster, judged=judged, replicas=replicas)
        canary_prune(cluster=cluster, before=now - timedelta(hours=settings.CANARY_RETENTION_HOURS))
        if round_outcome_record(row=lease, error=""):
            logger.warning("cluster %s: canary measures again", cluster.name)
        return windows


def canary_prune(*, cluster: Cluster, before) -> int:
    """Forget the cluster's canary windows older than `before`; how many went."""
    deleted, _ = CanaryWindow.objects.filter(cluster=cluster, at__lt=before).delete()
    return deleted
