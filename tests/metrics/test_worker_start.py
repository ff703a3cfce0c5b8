"""The aggregation worker warms its Spark session at start (no Spark here: faked)."""

import threading
from types import SimpleNamespace

import pytest

from apps.metrics import worker_start
from apps.metrics.services import spark_session


def worker(*queues: str) -> SimpleNamespace:
    consume_from = {q: object() for q in queues} if queues else None
    return SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=SimpleNamespace(
        consume_from=consume_from
    ))))  # fmt: skip


@pytest.mark.parametrize(
    ("queues", "in_process", "master", "release", "warms"),
    [
        (("aggregation",), True, "local[*]", True, True),
        ((), True, "local[2]", True, False),  # no -Q: every queue, each pool process
        (("celery",), True, "local[*]", True, False),
        (("clusters",), True, "local[*]", True, False),
        (("aggregation",), False, "local[*]", True, False),  # one spark-submit per run
        (("aggregation",), True, "spark://m:7077", True, False),  # released after each run
        (("aggregation",), True, "spark://m:7077", False, True),
    ],
)
def test_only_an_aggregation_worker_with_a_session_kept_warm_warms_it(
    settings, monkeypatch, queues, in_process, master, release, warms
):
    settings.METRICS_AGGREGATION_IN_PROCESS = in_process
    settings.SPARK_MASTER = master
    settings.SPARK_RELEASE_BETWEEN_RUNS = release
    started = []
    monkeypatch.setattr(worker_start, "spark_session_warm", lambda: started.append(1))

    worker_start._decide(instance=worker(*queues))
    worker_start._warm()
    for thread in threading.enumerate():
        if thread.name == "spark-warm":
            thread.join(5)

    assert started == ([1] if warms else [])


def test_a_run_during_the_warm_up_waits_for_its_session(settings, monkeypatch):
    settings.SPARK_MASTER = "local[2]"
    monkeypatch.setattr(spark_session, "_worker_spark", None)
    building, release = threading.Event(), threading.Event()
    built = []

    def create():
        building.set()
        release.wait(5)
        built.append(object())
        return built[-1]

    monkeypatch.setattr(spark_session, "spark_session_create", create)
    monkeypatch.setattr("spark_jobs.partition_loads.aggregation_warm_up", lambda spark, **kw: 1)
    warm = threading.Thread(target=spark_session.spark_session_warm)
    warm.start()
    assert building.wait(5)
    got = []
    run = threading.Thread(target=lambda: got.append(spark_session.spark_session_for_worker()))
    run.start()
    release.set()
    warm.join(5)
    run.join(5)

    assert len(built) == 1 and got == built


@pytest.mark.parametrize(
    ("queues", "sends"), [(("clusters",), True), ((), True), (("aggregation",), False)]
)
def test_the_clusters_worker_takes_a_first_sync_and_sample_round_as_it_starts(
    monkeypatch, queues, sends
):
    sent = []
    monkeypatch.setattr(
        "apps.clusters.tasks.clusters_sync_all.apply_async", lambda **kw: sent.append("sync")
    )
    monkeypatch.setattr(
        "apps.metrics.tasks.metrics_sample_all.apply_async", lambda **kw: sent.append("sample")
    )

    worker_start._decide(instance=worker(*queues))
    worker_start._first_rounds()

    assert sent == (["sync", "sample"] if sends else [])
