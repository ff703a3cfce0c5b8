"""The Prometheus metrics, read from the database at scrape time by one collector: every
web process answers the same figures, however many there are, and a figure shown on a
page and its metric come from the same selector."""

from collections.abc import Iterator

from django.utils import timezone
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from apps.audit.actions import AuthAction
from apps.audit.selectors import audit_events_filter
from apps.clusters.selectors import broker_counts_by_liveness, clusters_list, rounds_all_list
from apps.metrics.selectors import aggregation_runs_recent
from apps.notifications.selectors import deliveries_count_by_state
from apps.plans.selectors import (
    plan_progress,
    plan_running_get,
    plans_count_by_origin,
    plans_count_by_state,
)

PREFIX = "balancer"


def _gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=labels)


def _counter(name: str, doc: str, labels: list[str]) -> CounterMetricFamily:
    return CounterMetricFamily(f"{PREFIX}_{name}", doc, labels=labels)


class BalancerCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        clusters = clusters_list()
        names = {c.pk: c.name for c in clusters}
        yield from self._clusters(clusters)
        yield from self._rounds()
        yield from self._plans(clusters, names)
        yield from self._deliveries_and_sign_ins()

    def _clusters(self, clusters: list) -> Iterator[Metric]:
        now = timezone.now()
        reachable = _gauge(
            "cluster_reachable", "1 when the last sync read the cluster", ["cluster"]
        )
        age = _gauge("cluster_sync_age_seconds", "Seconds since the last good sync", ["cluster"])
        brokers = _gauge("cluster_brokers", "Known brokers, alive or not", ["cluster", "alive"])
        counts = broker_counts_by_liveness()
        aggregation = _gauge(
            "aggregation_last_duration_seconds",
            "How long the cluster's newest finished aggregation run took",
            ["cluster", "status"],
        )
        for cluster in clusters:
            reachable.add_metric([cluster.name], 1.0 if cluster.reachable else 0.0)
            if cluster.last_synced_at is not None:
                age.add_metric([cluster.name], (now - cluster.last_synced_at).total_seconds())
            for alive in (True, False):
                brokers.add_metric(
                    [cluster.name, str(alive).lower()], counts.get((cluster.pk, alive), 0)
                )
            run = next(
                (r for r in aggregation_runs_recent(cluster=cluster, limit=5) if r.finished_at),
                None,
            )
            if run is not None:
                seconds = (run.finished_at - run.started_at).total_seconds()
                aggregation.add_metric([cluster.name, run.status], seconds)
        yield from (reachable, age, brokers, aggregation)

    def _rounds(self) -> Iterator[Metric]:
        labels = ["cluster", "kind"]
        duration = _gauge(
            "round_last_duration_seconds",
            "How long the last sync / sample / aggregation / detection round took",
            labels,
        )
        skipped = _counter(
            "round_skipped", "Rounds not started because the previous one still ran", labels
        )
        failing = _gauge("round_failing", "1 while the kind's last round failed", labels)
        for row in rounds_all_list():
            key = [row.cluster.name, row.kind]
            if row.last_seconds is not None:
                duration.add_metric(key, row.last_seconds)
            skipped.add_metric(key, row.skipped)
            failing.add_metric(key, 1.0 if row.last_error else 0.0)
        yield from (duration, skipped, failing)

    def _plans(self, clusters: list, names: dict[int, str]) -> Iterator[Metric]:
        by_state = _gauge("plans", "Plans by state", ["cluster", "state"])
        for (cluster_id, state), n in sorted(plans_count_by_state().items()):
            by_state.add_metric([names[cluster_id], state], n)
        proposed = _counter("plans_made", "Plans made, by who asked", ["cluster", "origin"])
        for (cluster_id, origin), n in sorted(plans_count_by_origin().items()):
            proposed.add_metric([names[cluster_id], origin], n)
        labels = ["cluster", "plan"]
        done = _gauge("execution_bytes_done", "Bytes the running plan has copied", labels)
        total = _gauge("execution_bytes_total", "Bytes the running plan copies in all", labels)
        throttle = _gauge(
            "execution_throttle_bytes_per_second", "The running plan's throttle (0: none)", labels
        )
        for cluster in clusters:
            plan = plan_running_get(cluster=cluster)
            if plan is None:
                continue
            progress = plan_progress(plan=plan)
            key = [cluster.name, str(plan.pk)]
            done.add_metric(key, progress.bytes_done)
            total.add_metric(key, progress.bytes_total)
            throttle.add_metric(key, progress.throttle_bytes_per_sec)
        yield from (by_state, proposed, done, total, throttle)

    def _deliveries_and_sign_ins(self) -> Iterator[Metric]:
        deliveries = _gauge(
            "notification_deliveries", "Notification deliveries in the log, by state", ["state"]
        )
        for state, n in sorted(deliveries_count_by_state().items()):
            deliveries.add_metric([state], n)
        lockouts = CounterMetricFamily(
            f"{PREFIX}_signin_lockouts", "Sign-in lockouts recorded in the audit trail"
        )
        lockouts.add_metric([], audit_events_filter(action=AuthAction.LOCKED_OUT).count())
        yield from (deliveries, lockouts)
