"""Child process of test_spark_standalone_live.py: two aggregations against a Spark
standalone master, as the aggregation worker runs them, on a SQLite file of its own
(DATABASE_URL) that spark-submit's job shares through the environment.

1. in-process (METRICS_AGGREGATION_IN_PROCESS on): the worker's session, looking at
   the master while the session is up and after the run released it;
2. spark-submit (off), for a second registered cluster reading the same topic.

    python tests/metrics/standalone_runs.py BOOTSTRAP MASTER_UI_URL

Prints one JSON object: the runs, the stored loads and what the master showed.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def master_apps(ui_url: str) -> list[dict]:
    """The master's running applications (id, name, cores granted, MB per executor)."""
    with urllib.request.urlopen(f"{ui_url}/json/", timeout=10) as response:
        state = json.load(response)
    return [
        {"id": a["id"], "name": a["name"], "cores": a["cores"], "memory": a["memoryperexecutor"]}
        for a in state["activeapps"]
        if a["state"] == "RUNNING"
    ]


def master_apps_settled(ui_url: str, *, timeout: float = 60.0) -> list[dict]:
    """The running applications once none is left, or as they are after `timeout` s:
    a stopped SparkContext tells the master asynchronously."""
    deadline = time.monotonic() + timeout
    while (apps := master_apps(ui_url)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return apps


def main() -> int:
    bootstrap, ui_url = sys.argv[1:3]
    sys.path[:0] = [str(REPO), str(REPO / "scripts")]  # as pyproject's pythonpath: devkit
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    import django

    django.setup()
    from devkit.partition_loads import partition_loads_read
    from django.conf import settings
    from django.core.management import call_command

    from apps.clusters.models import Cluster
    from apps.metrics.services import aggregation_dispatch, dispatch

    call_command("migrate", verbosity=0)
    seen: dict[str, list[dict]] = {}
    run_in_session = dispatch.aggregation_run

    def observed(**kwargs):
        run = run_in_session(**kwargs)
        seen["apps_during"] = master_apps(ui_url)  # the session still holds its executors
        return run

    dispatch.aggregation_run = observed
    runs = {}
    for name, in_process in (("in-process", True), ("spark-submit", False)):
        settings.METRICS_AGGREGATION_IN_PROCESS = in_process
        cluster = Cluster.objects.create(name=name, bootstrap_servers=bootstrap)
        run = aggregation_dispatch(cluster=cluster)
        if in_process:
            seen["apps_after"] = master_apps_settled(ui_url)
        runs[name] = {
            "status": run.status,
            "error": run.error,
            "spark_master": run.spark_master,
            "input_rows": run.input_rows,
            "output_rows": run.output_rows,
            "loads": [
                {
                    "topic": p.topic,
                    "partition": p.partition,
                    "window_start_ms": int(p.window_start.timestamp() * 1000),
                    "samples": p.samples,
                    "messages_in": p.messages_in,
                    "bytes_in": p.bytes_in,
                    "bytes_out": p.bytes_out,
                    "size": p.size,
                }
                for p in sorted(partition_loads_read(cluster=cluster), key=lambda p: p.partition)
            ],
        }
    print(json.dumps({"runs": runs, **seen}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
