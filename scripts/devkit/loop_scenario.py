"""The closed loop on the dev cluster, end to end, as issue 15 measures it.

A new topic of 6 partitions, RF 1, all on broker 1, is fed at ~3 MB/s, beside an
idle topic of BASE_PARTITIONS spread evenly (the cluster's other topics: with them
the replica counts stay within their threshold, so it is the traffic that is
skewed, as in the issue). The disk skew that follows the traffic (every byte of
the new topic lands on broker 1) is not what the scenario measures: its
disk-distribution threshold is set out of reach (DISK_THRESHOLD), so the plan is
triggered by the traffic. Without it, a window holding one sample of the new
partitions (sizes, but no rates yet) shows disk violated and network in not. The
inline beat (`threaded=False`) samples only between aggregation runs, so with runs
longer than half the window (15 s of the test's 30) the newest window, the one
detection judges, holds one sample: disk was confirmed on two of them and proposed
alone (reproduced with samples 20 s apart: "disk-distribution: broker 1 above the
band: 3.00 x mean"). In that regime no window measures the traffic, so the loop
cannot close in this harness; beat proper samples beside the runs. Beat's work
(sync and sample every `sample_every` s) runs in a thread; the aggregation runs in
the caller's thread as the one aggregation worker would: right after each flushed
round (METRICS_AGGREGATE_AFTER_SAMPLE) and at each METRICS_AGGREGATE_INTERVAL tick,
never two at once, with Celery eager,
so the detection a stored window starts, the auto-approval and the execution run
as they would in the workers. The timeline is read from what the loop records:
`loads_stored` (when a window was stored) and the plan's own timestamps.

Used by tests/plans/test_loop_live.py and bench/bench_loop.py.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import connection

from devkit.producer import AckedProducer

PARTITIONS = 6
BASE_PARTITIONS = 150
RECORD_BYTES = 1_000
THROTTLE = 50_000_000
# Above the new topic's whole skew (all bytes on one of 3 brokers: 3x the mean).
DISK_THRESHOLD = 10.0


@dataclass
class Timeline:
    """Seconds after the skew began, None when it did not happen."""

    skew_started: float
    window_stored: float | None = None
    proposed: float | None = None
    approved: float | None = None
    executed: float | None = None
    balanced: float | None = None
    plan_trigger: str = ""
    plan_moves: int = 0
    plan_bytes: int = 0
    produced_rate: float = 0.0
    # (seconds after the skew, window start, bytes-in spread across brokers) per window.
    windows: list[tuple[float, str, float]] = field(default_factory=list)
    plans_after_balanced: int = 0
    max_spread_after_balanced: float | None = None
    observed_s: float = 0.0
    # (seconds after the skew, what happened) for every sample round and aggregation
    # run: where the seconds go (bench_loop prints it).
    trace: list[tuple[float, str]] = field(default_factory=list)

    def rows(self) -> list[tuple[str, float | None]]:
        return [
            ("skew starts (first record of the new topic)", 0.0),
            ("first window measuring it stored", self.window_stored),
            ("plan proposed", self.proposed),
            ("plan approved", self.approved),
            ("execution complete", self.executed),
            ("bytes-in within tolerance of the mean (window stored)", self.balanced),
        ]


class Beat:
    """Sync and sample every `every` seconds, as Celery beat schedules them: in a
    thread, or (`threaded=False`, for an in-memory SQLite test database that one
    thread at a time may use) between the aggregation runs when due."""

    def __init__(
        self, *, cluster_id: int, every: float, threaded: bool = True, on_round=None
    ) -> None:
        self.cluster_id, self.every, self.threaded = cluster_id, every, threaded
        self.on_round = on_round
        self._flushed = threading.Event()
        self.error: BaseException | None = None
        self._due = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _round(self) -> None:
        from apps.clusters.models import Cluster
        from apps.clusters.services import cluster_sync
        from apps.metrics.services import metrics_sample

        cluster = Cluster.objects.get(pk=self.cluster_id)
        started = time.time()
        cluster_sync(cluster=cluster)
        synced = time.time()
        metrics_sample(cluster=cluster)
        self._flushed.set()
        if self.on_round is not None:
            self.on_round(started, synced, time.time())

    def flushed(self) -> bool:
        """A round was flushed since the last call (METRICS_AGGREGATE_AFTER_SAMPLE)."""
        if self._flushed.is_set():
            self._flushed.clear()
            return True
        return False

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                self._round()
                self._stop.wait(max(0.0, self.every - (time.monotonic() - started)))
        except BaseException as exc:  # reported by the caller
            self.error = exc
        finally:
            connection.close()

    def tick(self) -> None:
        """Inline mode: one round if one is due."""
        if not self.threaded and time.monotonic() >= self._due:
            self._due = time.monotonic() + self.every
            self._round()

    def start(self) -> None:
        if self.threaded:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(60)


class _PhaseLog(logging.Handler):
    """Keeps the last 'aggregation of ...: offsets x s, spark y s, store z s' line."""

    last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.last = record.getMessage().split(": ", 1)[-1]


def _spread(per_broker: dict[int, float]) -> float:
    mean = sum(per_broker.values()) / len(per_broker)
    return max(abs(v - mean) for v in per_broker.values()) / mean if mean > 0 else 0.0


def _window_spread(*, cluster, topic: str, window_start, brokers: list[int]) -> float | None:
    """Bytes-in spread of the topic across brokers in one window (by its replicas)."""
    from devkit.partition_loads import partition_loads_read

    rows = partition_loads_read(cluster=cluster, topic=topic, window_start=window_start)
    per_broker = dict.fromkeys(brokers, 0.0)
    measured = 0
    for row in rows:
        if row.bytes_in is None:
            continue
        measured += 1
        for b in row.replicas:
            per_broker[b] = per_broker.get(b, 0.0) + row.bytes_in
    if measured < PARTITIONS or sum(per_broker.values()) <= 0:
        return None
    return _spread(per_broker)


def topic_create(*, bootstrap: str, topic: str, assignment: list[list[int]]) -> None:
    from confluent_kafka.admin import AdminClient

    from devkit import live

    live.topic_create(AdminClient({"bootstrap.servers": bootstrap}), topic, assignment=assignment)


def _brokers(bootstrap: str) -> list[dict]:
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=30)
    return [{"id": b} for b in md.brokers]


def topic_delete(*, bootstrap: str, topic: str) -> None:
    """The scenario's topic and its idle neighbour; best effort (a leftover is out of
    every later scope)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_topics([topic, f"{topic}-base"]).values():
        try:
            future.result(30)
        except Exception:
            pass


def loop_run(
    *,
    cluster,
    bootstrap: str,
    spark: Any,
    topic: str,
    rate: float = 3_000_000,
    sample_every: float = 10.0,
    observe_s: float = 120.0,
    timeout_s: float = 300.0,
    tolerance: float = 0.10,
    threaded_beat: bool = True,
    log=print,
) -> Timeline:
    """Run the scenario once; returns its timeline (raises only on setup errors)."""
    from apps.metrics.services.aggregation import aggregation_run
    from apps.metrics.signals import loads_stored
    from apps.plans.models import ClusterPolicy, Plan, PlanState
    from apps.plans.services import policy_get
    from balancer_site.celery import app

    policy = policy_get(cluster=cluster)
    ClusterPolicy.objects.filter(pk=policy.pk).update(
        topics_include=[topic, f"{topic}-base"],
        detection_enabled=True,
        detection_interval=10**6,  # only new loads start a detection here
        auto_approve_max_bytes=10**12,
        throttle_bytes_per_sec=THROTTLE,
        balance_threshold=1.10,
        balance_target=1.05,
        goal_thresholds={"disk-distribution": DISK_THRESHOLD},
    )
    interval = float(settings.METRICS_AGGREGATE_INTERVAL)
    after_sample = settings.METRICS_AGGREGATE_AFTER_SAMPLE
    stored: list[tuple[float, Any]] = []

    def on_loads(sender=None, cluster=None, window_start=None, **kwargs) -> None:
        stored.append((time.time(), window_start))

    events: list[tuple[float, str]] = []  # (epoch seconds, what)

    def on_round(started: float, synced: float, done: float) -> None:
        events.append(
            (started, f"beat: sync {synced - started:.1f} s, sampled +{done - started:.1f} s")
        )

    phases = _PhaseLog()
    phase_logger = logging.getLogger("apps.metrics.services.aggregation")
    phase_logger.addHandler(phases)
    phase_level = phase_logger.level
    phase_logger.setLevel(logging.INFO)

    def aggregate() -> None:
        started = time.time()
        stored_before = len(stored)
        aggregation_run(cluster=cluster, spark=spark)
        new = [w for _at, w in stored[stored_before:]]
        events.append(
            (
                started,
                f"aggregation {time.time() - started:.1f} s ({phases.last})"
                + (f", stored window {new[-1]:%H:%M:%S}" if new else ", no new window"),
            )
        )

    loads_stored.connect(on_loads, dispatch_uid="loop_scenario")
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    beat = Beat(
        cluster_id=cluster.pk, every=sample_every, threaded=threaded_beat, on_round=on_round
    )
    producer = AckedProducer.at_bytes_rate(
        bootstrap=bootstrap,
        topic=topic,
        partitions=PARTITIONS,
        bytes_per_second=rate,
        record_size=RECORD_BYTES,
        linger_ms=20,
        keys_kept=False,
    )
    try:
        # Warm up: a synced model, a cursor and a warm Spark session before the skew.
        from apps.clusters.services import cluster_sync
        from apps.metrics.services import metrics_sample

        brokers = sorted(b["id"] for b in _brokers(bootstrap))
        base = [[brokers[i % len(brokers)]] for i in range(BASE_PARTITIONS)]
        topic_create(bootstrap=bootstrap, topic=f"{topic}-base", assignment=base)
        cluster_sync(cluster=cluster)
        metrics_sample(cluster=cluster)
        aggregation_run(cluster=cluster, spark=spark)
        topic_create(bootstrap=bootstrap, topic=topic, assignment=[[1]] * PARTITIONS)
        beat.start()
        t0 = producer.start().started_wait()
        t0_dt = datetime.fromtimestamp(t0, tz=UTC)
        timeline = Timeline(skew_started=t0)
        seen_windows: set[Any] = set()
        deadline = t0 + timeout_s
        while time.time() < deadline:
            started = time.monotonic()
            beat.tick()
            aggregate()
            if beat.error is not None:
                raise beat.error
            for at, window_start in stored:
                if window_start in seen_windows:
                    continue
                seen_windows.add(window_start)
                spread = _window_spread(
                    cluster=cluster, topic=topic, window_start=window_start, brokers=brokers
                )
                if spread is None:
                    continue
                timeline.windows.append((at - t0, window_start.isoformat(), spread))
                if timeline.window_stored is None:
                    timeline.window_stored = at - t0
                log(f"  +{at - t0:5.1f} s window {window_start:%H:%M:%S} spread {spread:.1%}")
                if (
                    timeline.executed is not None
                    and timeline.balanced is None
                    and spread <= tolerance
                ):
                    timeline.balanced = at - t0
            plan = Plan.objects.filter(cluster=cluster, created_at__gte=t0_dt).order_by("pk")
            first = plan.first()
            if first is not None and timeline.proposed is None:
                timeline.proposed = first.created_at.timestamp() - t0
                timeline.plan_trigger = first.trigger
                timeline.plan_moves = first.moves.count()
                timeline.plan_bytes = first.bytes_to_move
            executed = plan.filter(state=PlanState.COMPLETED).first()
            if executed is not None and timeline.executed is None:
                timeline.approved = executed.decided_at.timestamp() - t0
                timeline.executed = executed.finished_at.timestamp() - t0
            if timeline.balanced is not None:
                timeline.observed_s = time.time() - (t0 + timeline.balanced)
                if timeline.observed_s >= observe_s:
                    break
            # The next run, as the one aggregation worker takes them: at once when a
            # round was flushed meanwhile (METRICS_AGGREGATE_AFTER_SAMPLE), else at
            # beat's next aggregation tick.
            while time.monotonic() - started < interval:
                beat.tick()
                if after_sample and beat.flushed():
                    break
                time.sleep(0.05)
        if timeline.balanced is not None:
            balanced_at = t0 + timeline.balanced
            after = [s for at, _w, s in timeline.windows if t0 + at > balanced_at]
            timeline.max_spread_after_balanced = max(after) if after else None
            timeline.plans_after_balanced = Plan.objects.filter(
                cluster=cluster,
                created_at__gt=datetime.fromtimestamp(balanced_at, tz=UTC),
            ).count()
        timeline.produced_rate = producer.sent * RECORD_BYTES / max(1e-9, time.time() - t0)
        timeline.trace = sorted((at - t0, what) for at, what in events)
        return timeline
    finally:
        phase_logger.removeHandler(phases)
        phase_logger.setLevel(phase_level)
        producer.stop()
        beat.stop()
        app.conf.task_always_eager = eager
        loads_stored.disconnect(dispatch_uid="loop_scenario")
