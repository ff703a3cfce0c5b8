"""Benchmark: the control plane around the planner on a large synthetic cluster.

Builds a cluster of B brokers, T topics and P partitions (RF 3, 6 racks) through the
project's own services, without Kafka: the sync's apply service, the metrics storage
service, the snapshot selector, one detection round and the dashboard pages (Django's
test client, so server time only). Prints, each timed in this one run:

- a calibration loop (pure Python, fixed work: compare runs on a noisy machine by it);
- sync rounds: first (everything new), unchanged, 5 % of leaders moved (with queries);
- one window of partition and broker loads stored;
- the planner snapshot built;
- one detection round, and the planner's own part of it;
- server time and bytes of every page (each twice where the first request of the
  process pays its one-off imports and template compiling): the clusters overview, the
  cluster page (searched, paged), its heatmap (searched, sorted, paged), the API's
  cluster, broker, partition (paged, by broker) and traffic answers, and the plan page
  of the proposal detection made with its bars and its moves table as plan.js asks for
  it (500 a page, sorted, filtered by topic, broker and goal, the last page);
- live pages: `--viewers` (20) open cluster pages, each a Channels websocket
  communicator, and the server time per viewer per update after a sync with nothing
  changed and after one with 5 % of leaders moved: the sync's one push (its stamp),
  plus what each page then fetches as cluster.js does (its regions and heatmap for
  the pushed stamp: the first page builds them, the others are served them from the
  cache); and, for comparison, what every page fetched on every sync before the
  stamp (page, heatmap, traffic).

    .venv/bin/python bench/bench_control_plane.py --brokers 100 --topics 2000 --partitions 50000
    .venv/bin/python bench/bench_control_plane.py --brokers 270 --topics 8000 --partitions 200000
    .venv/bin/python bench/bench_control_plane.py ... --database postgres

SQLite is a scratch file; PostgreSQL is DATABASE_URL when set, else a throwaway server
on PG_TEST_PORT (default 25432) started and removed by this script.

Wall time follows the machine's load; CPU time (this process: Django, SQLite) is steadier.
On a PostgreSQL server on this machine the timed steps, the pages and the live
updates also print the server's CPU (its backend process for this connection), which
the process's own CPU leaves out: a step's cost is its CPU plus the server's. The
throwaway server runs without parallel workers, so that backend does all the work.
`--store-only` times just the windows of loads stored (the first, and the one that
prunes the oldest), for profiling the store.
`--sync-only` times just the sync rounds (`--profile DIR` dumps each one's cProfile stats).

Targets (issue 14, at 270 brokers / 8,000 topics / 200k partitions): sync unchanged
<= 1 s, 5 % leaders moved <= 2 s, window stored <= 2 s, snapshot <= 1.5 s, detection
<= planner + 3 s, every page <= 300 ms and <= 300 KB.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

# The synthetic cluster, shared with the browser tests of a big cluster.
from devkit.synthetic_cluster import RF, state_make, topology_generate, window_make  # noqa: E402


def calibrate() -> float:
    """A fixed amount of dict/list work, like the services do; seconds taken."""
    start = time.perf_counter()
    total = 0
    for i in range(300_000):
        d = {"a": i, "b": [i, i + 1, i + 2]}
        total += len(d["b"]) + (d["a"] & 7)
    assert total
    return time.perf_counter() - start


@contextlib.contextmanager
def database(kind: str):
    """Set DATABASE_URL for a scratch SQLite file or a (throwaway) PostgreSQL."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-control-plane-"))
    try:
        if kind == "sqlite":
            os.environ["DATABASE_URL"] = f"sqlite:///{scratch / 'bench.sqlite3'}"
            yield
        elif os.environ.get("DATABASE_URL", "").startswith("postgres"):
            yield
        else:
            yield from _postgres(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _postgres(scratch: Path):
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"))
    if not found:
        sys.exit("bench: PostgreSQL is not installed (apt-get install -y postgresql)")
    bin_dir, port = found[-1], os.environ.get("PG_TEST_PORT", "25432")
    data = scratch / "pg"
    data.mkdir()
    run_as: list[str] = []
    if os.getuid() == 0:  # PostgreSQL refuses to run as root
        shutil.chown(scratch, "postgres")
        shutil.chown(data, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    subprocess.run(
        [*run_as, str(bin_dir / "initdb"), "-D", str(data), "-U", "balancer", "--auth=trust"],
        check=True,
        capture_output=True,
    )
    # No parallel workers: the backend's own CPU (server_cpu) is then all a query cost.
    options = (
        f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
        " -c max_parallel_workers_per_gather=0"
    )
    ctl = [*run_as, str(bin_dir / "pg_ctl"), "-D", str(data)]
    subprocess.run(
        [*ctl, "-w", "-l", str(data / "log"), "-o", options, "start"],
        check=True,
        capture_output=True,
    )
    # initdb makes the role and the "postgres" database; nothing else is needed.
    os.environ["DATABASE_URL"] = f"postgres://balancer@127.0.0.1:{port}/postgres"
    try:
        yield
    finally:
        subprocess.run([*ctl, "-m", "immediate", "stop"], capture_output=True)


class QueryCounter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        self.count += 1
        return execute(sql, params, many, context)


def profiled(fn, path: Path | None):
    """fn, run under cProfile when a path is given (stats dumped there)."""
    if path is None:
        return fn

    def run():
        import cProfile

        path.parent.mkdir(parents=True, exist_ok=True)
        with cProfile.Profile() as profile:
            try:
                return fn()
            finally:
                profile.dump_stats(path)

    return run


def server_cpu() -> float | None:
    """CPU seconds of this connection's PostgreSQL backend so far (a server on this
    machine: its /proc entry), None for SQLite or a server elsewhere."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid  # psycopg 3: no query needed
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(label: str, fn, *, queries: bool = False, profile: Path | None = None):
    from django.db import connection

    counter = QueryCounter()
    server = server_cpu()
    start, cpu = time.perf_counter(), time.process_time()
    with connection.execute_wrapper(counter):
        result = profiled(fn, profile)()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    extra = f"  ({counter.count} queries)" if queries else ""
    if server is not None and (after := server_cpu()) is not None:
        extra += f"  server cpu {after - server:.3f} s"
    print(f"  {label:<44} {elapsed:8.3f} s  cpu {cpu:7.3f} s{extra}", flush=True)
    return elapsed, result


def size_print(*, kept: int, windows: int) -> None:
    """The database's size with the kept windows of partition loads stored."""
    from django.db import connection

    tables = (
        "metrics_topicload",
        "metrics_brokerload",
        "clusters_partition",
        "clusters_topic",
    )
    label = f"database size ({min(kept, windows)} partition windows kept)"
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = Path(connection.settings_dict["NAME"]).stat().st_size
        print(f"  {label:<44} {size / 2**20:8.1f} MiB (SQLite file)", flush=True)
        with contextlib.suppress(Exception), connection.cursor() as cursor:
            # Tables with their indexes, where SQLite has the dbstat table compiled in.
            for table in tables:
                cursor.execute(
                    "SELECT SUM(pgsize) FROM dbstat WHERE name = %s OR name IN "
                    "(SELECT name FROM sqlite_master WHERE tbl_name = %s)",
                    [table, table],
                )
                size = cursor.fetchone()[0] or 0
                print(f"    {table:<42} {size / 2**20:8.1f} MiB", flush=True)
        return
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute("SELECT pg_total_relation_size(%s)", [table])
            size = cursor.fetchone()[0]
            print(f"  {table:<44} {size / 2**20:8.1f} MiB (pg_total_relation_size)", flush=True)


def page(client, label: str, url: str, *, profile: Path | None = None) -> tuple[float, int]:
    """GET url with the test client: wall, CPU, size and (PostgreSQL here) the server's
    CPU; with `cpu + server` the page's cost on a shared machine."""
    server = server_cpu()
    start, cpu = time.perf_counter(), time.process_time()
    response = profiled(lambda: client.get(url), profile)()
    body = b"".join(response.streaming_content) if response.streaming else response.content
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if response.status_code != 200:
        raise SystemExit(f"{url}: HTTP {response.status_code}")
    extra = ""
    if server is not None and (after := server_cpu()) is not None:
        extra = f"  server cpu {after - server:.3f} s"
    print(
        f"  {label:<44} {elapsed:8.3f} s  cpu {cpu:7.3f} s  {len(body) / 1024:8.1f} KB{extra}",
        flush=True,
    )
    return elapsed, len(body)


def live_measure(*, cluster, user, viewers: int, syncs: dict) -> None:
    """`viewers` cluster pages on the live socket. For each sync: run it (not timed),
    then time the push its signal makes and, per page, the fetches cluster.js makes on
    that push; print (push + fetches) / viewers, CPU and wall, and the same for what
    every page fetched on every sync before the stamp (page, heatmap, traffic)."""
    import asyncio
    from urllib.parse import quote

    from asgiref.sync import sync_to_async
    from channels.testing import WebsocketCommunicator
    from django.db import connection
    from django.test import Client

    from apps.clusters.models import Cluster
    from apps.clusters.signals import cluster_synced
    from apps.dashboard.consumers import ClusterConsumer

    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # the test client, inside the loop
    client = Client()
    client.force_login(user)
    page_url, api = f"/clusters/{cluster.name}/", f"/api/clusters/{cluster.name}"
    # As cluster.js asks, naming the pushed stamp: the first page builds each answer,
    # the others are served it from the cache (metrics.selectors.stamped_answer_get).
    regions_url = f"/clusters/{cluster.name}/live/?stamp={{token}}"
    heatmap_url = f"{api}/heatmap/?metric=replicas&stamp={{token}}"
    fetches = {
        "model": [regions_url, heatmap_url],
        "window": [regions_url, heatmap_url, f"{api}/traffic/?stamp={{token}}"],
    }

    # The server's CPU, counted where the requests run (sync_to_async's one thread, whose
    # connection the test client keeps open): PostgreSQL's share of each update.
    server = [0.0]

    def server_counted(fn):
        before = server_cpu()
        try:
            return fn()
        finally:
            if before is not None and (after := server_cpu()) is not None:
                server[0] += after - before

    def get(url: str) -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        response = server_counted(lambda: client.get(url))
        assert response.status_code == 200, (url, response.status_code)
        return time.perf_counter() - start, time.process_time() - cpu

    def push() -> tuple[float, float]:
        fresh = Cluster.objects.get(pk=cluster.pk)
        start, cpu = time.perf_counter(), time.process_time()
        server_counted(lambda: cluster_synced.send_robust(sender=Cluster, cluster=fresh))
        return time.perf_counter() - start, time.process_time() - cpu

    async def run() -> None:
        pages = []
        for _ in range(viewers):
            ws = WebsocketCommunicator(ClusterConsumer.as_asgi(), f"/ws/clusters/{cluster.name}/")
            ws.scope["user"] = user
            ws.scope["url_route"] = {"kwargs": {"name": cluster.name}}
            connected, _ = await ws.connect()
            assert connected and (await ws.receive_json_from(timeout=30))["type"] == "hello"
            pages.append(ws)
        # Each page starts from the stamp its HTML carried.
        body = (await sync_to_async(client.get)(page_url)).content.decode()
        model = body.split('data-stamp-model="', 1)[1].split('"', 1)[0]
        window = body.split('data-stamp-window="', 1)[1].split('"', 1)[0]
        stamps = [{"model": model, "window": window} for _ in pages]
        for label, sync in syncs.items():
            await sync_to_async(sync)()
            server[0] = 0.0
            wall, cpu = await sync_to_async(push)()
            first_wall = first_cpu = None
            for i, ws in enumerate(pages):
                message = await ws.receive_json_from(timeout=60)
                while message["type"] != "cluster.changed":  # e.g. a plan's notice
                    message = await ws.receive_json_from(timeout=60)
                fresh = message["stamp"]
                urls = []
                for part in ("model", "window"):
                    if fresh[part] != stamps[i][part]:
                        urls += [u for u in fetches[part] if u not in urls]
                stamps[i] = fresh
                token = quote(f"{fresh['model']}|{fresh['window']}")
                for url in urls:
                    w, c = await sync_to_async(get)(url.format(token=token))
                    wall, cpu = wall + w, cpu + c
                    if i == 0:
                        first_wall, first_cpu = wall, cpu
            if first_wall is not None:
                # The first page builds; the others are served: what each of those costs.
                rest = (wall - first_wall) / (viewers - 1) if viewers > 1 else 0.0
                rest_cpu = (cpu - first_cpu) / (viewers - 1) if viewers > 1 else 0.0
                detail = f", first page with the push {first_wall:.3f} s, each other {rest:.3f} s"
                detail += f" (cpu {rest_cpu:.3f} s)"
            else:
                detail = ""
            load = "/".join(f"{x:.1f}" for x in os.getloadavg())
            if connection.vendor == "postgresql":
                detail += f"; server cpu {server[0] / viewers:.3f} s per viewer"
            print(
                f"  {'live, per viewer per update (' + label + ')':<44} "
                f"{wall / viewers:8.3f} s  cpu {cpu / viewers:7.3f} s  ({viewers} pages"
                f"{detail}; load average {load})",
                flush=True,
            )
        wall = cpu = 0.0
        server[0] = 0.0
        for url in (page_url, f"{api}/heatmap/?metric=replicas", f"{api}/traffic/"):
            w, c = await sync_to_async(get)(url)
            wall, cpu = wall + w, cpu + c
        extra = f", server cpu {server[0]:.3f} s" if connection.vendor == "postgresql" else ""
        print(
            f"  {'live, before: every page refetched every sync':<44} "
            f"{wall:8.3f} s  cpu {cpu:7.3f} s  (per viewer{extra})",
            flush=True,
        )
        for ws in pages:
            await ws.disconnect()

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--brokers", type=int, default=100)
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=50_000)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--skip-detection", action="store_true", help="no planner run")
    parser.add_argument(
        "--store-only",
        action="store_true",
        help="only the windows of loads stored (no sync, snapshot, detection or pages)",
    )
    parser.add_argument(
        "--sync-only",
        action="store_true",
        help="only the sync rounds (first, unchanged, 5 %% leaders moved, leaders back)",
    )
    parser.add_argument("--viewers", type=int, default=20, help="open live pages")
    parser.add_argument(
        "--windows",
        type=int,
        default=0,
        help="windows of loads stored (default: the partition windows kept + 1, so the "
        "last one prunes; the database size is printed after them)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="directory: cProfile stats of each sync round, each detection round, the "
        "clusters overview, the cluster page, the plan page and the moves filtered by "
        "broker "
        "(read with python -m pstats)",
    )
    args = parser.parse_args()
    if args.partitions < args.topics:
        parser.error("--partitions must be at least --topics")

    with database(args.database):
        run(args)


def run(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "balancer_site.settings")
    # No Redis or Celery worker: signals' pushes go nowhere, tasks run in-process.
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    # No Kafka either: the proposal's log sizes (DescribeLogDirs) fail at once instead
    # of after the 5 s bootstrap timeout, a wait a reachable cluster never has, which
    # would otherwise be counted in the detection round's wall time.
    os.environ.setdefault("KAFKA_CONNECT_TIMEOUT", "0.2")
    import django

    django.setup()
    from django.conf import settings

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    settings.ALLOWED_HOSTS = ["*"]
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from apps.clusters.models import Cluster
    from apps.clusters.services import cluster_state_apply
    from apps.metrics.models import AggregationRun
    from apps.metrics.selectors import cluster_snapshot_build
    from apps.metrics.services import aggregation_results_store
    from apps.plans.models import Plan
    from apps.plans.selectors import plan_goals_list
    from apps.plans.services import detection

    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(
        f"{args.brokers} brokers, {args.topics} topics, {args.partitions} partitions "
        f"(RF {RF}), {engine}",
        flush=True,
    )
    calibration = [calibrate()]
    print(f"  {'calibration loop':<44} {calibration[0]:8.3f} s", flush=True)
    print(f"  {'(wall and CPU time of this process; the machine is shared)':<44}", flush=True)
    topology = topology_generate(
        brokers=args.brokers, topics=args.topics, partitions=args.partitions
    )
    unchanged = state_make(topology, brokers=args.brokers)
    moved = state_make(topology, brokers=args.brokers, moved=0.05)
    cluster = Cluster.objects.create(name="bench", bootstrap_servers="127.0.0.1:9")
    figures: dict[str, float] = {}

    def apply(state):
        return lambda: cluster_state_apply(cluster=cluster, state=state, now=timezone.now())

    if not args.store_only:
        rounds = (
            ("sync_first", "sync round, first (all new)", unchanged),
            ("sync_unchanged", "sync round, unchanged", unchanged),
            ("sync_moved", "sync round, 5 % leaders moved", moved),
            ("sync_back", "sync round, leaders back", unchanged),
        )
        for name, label, state in rounds:
            figures[name], _ = timed(
                label,
                apply(state),
                queries=True,
                profile=args.profile and args.profile / f"{name.replace('_', '-')}.prof",
            )
    if args.sync_only:
        calibration.append(calibrate())
        print(f"  {'calibration loop (again)':<44} {calibration[1]:8.3f} s", flush=True)
        return

    window_ms = settings.METRICS_WINDOW_SECONDS * 1000
    slide_ms = settings.METRICS_WINDOW_SLIDE_SECONDS * 1000
    kept = settings.METRICS_PARTITION_WINDOWS_KEPT
    windows = args.windows or kept + 1
    first_ms = (int(time.time() * 1000) // window_ms - 2) * window_ms - (windows - 1) * slide_ms
    from apps.metrics.signals import loads_stored
    from apps.plans import receivers

    def store(result):
        run_row = AggregationRun.objects.create(cluster=cluster, started_at=timezone.now())
        # The detection a stored window starts is timed on its own below.
        loads_stored.disconnect(dispatch_uid="plans_detect_on_loads_stored")
        try:
            aggregation_results_store(cluster=cluster, run=run_row, topic="metrics", result=result)
        finally:
            loads_stored.connect(
                receivers._detect_on_new_loads, dispatch_uid="plans_detect_on_loads_stored"
            )
        AggregationRun.objects.filter(pk=run_row.pk).update(status="succeeded")

    for w in range(windows):
        result = window_make(
            topology, window_start_ms=first_ms + w * slide_ms, window_ms=window_ms, seed=11 + w
        )
        if w == 0:
            figures["window"], _ = timed(
                "one window of loads stored", lambda r=result: store(r), queries=True
            )
        elif w == windows - 1:
            figures["window_pruning"], _ = timed(
                f"window {windows} stored (prunes the oldest)",
                lambda r=result: store(r),
                queries=True,
            )
        else:
            store(result)
        del result
    size_print(kept=kept, windows=windows)
    if args.store_only:
        calibration.append(calibrate())
        print(f"  {'calibration loop (again)':<44} {calibration[1]:8.3f} s", flush=True)
        return
    figures["snapshot"], snapshot = timed(
        "snapshot build", lambda: cluster_snapshot_build(cluster=cluster)
    )
    del snapshot

    if not args.skip_detection:
        planner_seconds = []
        real_planner = detection.planner_run

        planner_cpu = []

        def planner_timed(**kwargs):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return real_planner(**kwargs)
            finally:
                planner_seconds.append(time.perf_counter() - start)
                planner_cpu.append(time.process_time() - cpu)

        detection.planner_run = planner_timed

        def detect(label: str, name: str) -> None:
            planner_seconds.clear()
            planner_cpu.clear()
            # Detection plans only on a fresh model; the rounds above may have taken long.
            Cluster.objects.filter(pk=cluster.pk).update(last_synced_at=timezone.now())
            cluster.refresh_from_db()
            detect_cpu = time.process_time()
            figures["detection"], _ = timed(
                label,
                lambda: detection.cluster_detect(cluster=cluster),
                queries=True,
                profile=args.profile and args.profile / f"{name}.prof",
            )
            detect_cpu = time.process_time() - detect_cpu
            planner = sum(planner_seconds)
            print(
                f"  {'  of which planner':<44} {planner:8.3f} s  cpu {sum(planner_cpu):7.3f} s"
                f"  (rest {figures['detection'] - planner:.3f} s wall,"
                f" cpu {detect_cpu - sum(planner_cpu):.3f} s; {len(planner_seconds)} planner runs)",
                flush=True,
            )

        detect("detection round", "detection")
        if not Plan.objects.filter(cluster=cluster).exists():
            # A traffic violation is proposed on once a newer window confirms it: store
            # one and look again, so the plan's creation is timed too.
            store(
                window_make(
                    topology,
                    window_start_ms=first_ms + windows * slide_ms,
                    window_ms=window_ms,
                    seed=11 + windows,
                )
            )
            detect("detection round, violation confirmed", "detection-proposing")
        detection.planner_run = real_planner

    # This process holds the synthetic cluster's states (millions of objects) that a web
    # process would not: without freezing them, a full garbage collection over them (0.3 to
    # 0.4 s) lands on whichever page happens to trigger it.
    gc.collect()
    gc.freeze()
    user = get_user_model().objects.create_superuser("bench", "bench@example.com", "x")
    client = Client()
    client.force_login(user)
    prof = args.profile
    page(client, "clusters overview", "/", profile=prof and prof / "overview.prof")
    page(client, "clusters overview (again)", "/", profile=prof and prof / "overview-again.prof")
    figures["cluster_page"], _ = page(
        client, "cluster page", "/clusters/bench/", profile=prof and prof / "cluster-page.prof"
    )
    page(
        client,
        "cluster page (again)",
        "/clusters/bench/",
        profile=prof and prof / "cluster-page-again.prof",
    )
    page(client, "cluster page, topics searched", "/clusters/bench/?topic=topic-01")
    page(client, "cluster page, topics page 40", "/clusters/bench/?topics_page=40")
    page(client, "heatmap API (replicas)", "/api/clusters/bench/heatmap/?metric=replicas")
    page(client, "heatmap API (network_in)", "/api/clusters/bench/heatmap/?metric=network_in")
    page(
        client,
        "heatmap API (searched, sorted, page 2)",
        "/api/clusters/bench/heatmap/?metric=network_out&search=topic-0&sort=name&offset=50",
    )
    page(client, "traffic API", "/api/clusters/bench/traffic/")
    page(client, "clusters API", "/api/clusters/")
    page(client, "cluster API", "/api/clusters/bench/")
    page(client, "brokers API", "/api/clusters/bench/brokers/")
    page(client, "partitions API (first page)", "/api/clusters/bench/partitions/")
    page(
        client,
        "partitions API (broker 7, page 50)",
        "/api/clusters/bench/partitions/?broker=7&offset=5000",
    )
    # Partition loads are packed per topic: a page unpacks only the topic rows it covers.
    loads_url = "/api/clusters/bench/loads/partitions/"
    page(client, "partition loads API (first page)", loads_url)
    page(client, "partition loads API (a page deep in)", f"{loads_url}?offset=150000")
    plan = Plan.objects.filter(cluster=cluster).order_by("-pk").first()
    if plan is not None:
        moves = plan.moves.count()
        url = f"/clusters/bench/plans/{plan.pk}/"
        page(client, f"plan page ({moves} moves)", url, profile=prof and prof / "plan-page.prof")
        page(
            client, "plan bars (fetched after the page)", f"/clusters/bench/plans/{plan.pk}/loads/"
        )
        page(client, "plan API", f"/api/plans/{plan.pk}/")
        page(client, "plans API", "/api/clusters/bench/plans/")
        # The moves table as plan.js asks (500 a page), then sorted, filtered and paged.
        moves_url = f"/api/plans/{plan.pk}/moves/?limit=500"
        page(client, "moves API (as the page asks, 500)", f"{moves_url}&ordering=topic")
        page(client, "moves API (by bytes, descending)", f"{moves_url}&ordering=-bytes")
        page(client, "moves API (by state)", f"{moves_url}&ordering=state")
        page(client, "moves API (last page)", f"{moves_url}&offset={max(moves - 500, 0)}")
        page(client, "moves API (topic contains)", f"{moves_url}&topic=topic-00")
        page(
            client,
            "moves API (broker 7)",
            f"{moves_url}&broker=7",
            profile=prof and prof / "moves-broker.prof",
        )
        goal = (plan_goals_list(plan=plan) or ["none"])[0]
        page(client, f"moves API (goal {goal})", f"{moves_url}&goal={goal}")
        page(client, "moves API (broker 7, by bytes)", f"{moves_url}&broker=7&ordering=-bytes")
    live_measure(
        cluster=cluster,
        user=user,
        viewers=args.viewers,
        syncs={"unchanged": apply(unchanged), "5 % leaders moved": apply(moved)},
    )
    calibration.append(calibrate())
    print(f"  {'calibration loop (again)':<44} {calibration[1]:8.3f} s", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  {'peak RSS':<44} {rss:8.0f} MiB", flush=True)


if __name__ == "__main__":
    main()
