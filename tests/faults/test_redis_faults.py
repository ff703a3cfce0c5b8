"""Redis stopped (FAULTS_REDIS_DOWN_SECONDS, 10 s in the suite; the issue's figure is 60)
and restarted under a running product: Daphne and a Celery worker on their own
database. Pages still serve while it is down and the open page's live badge leaves
"live"; an approval made meanwhile is kept and audited; once Redis is back the page
reconnects without a reload, the worker reconnects on its own and runs the approved
plan (enqueued again by the resume sweep, as beat does every 30 s), and the page shows
it completed. acks=all traffic runs alongside."""

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from dev_cluster import DevCluster
from devkit import live
from devkit.polling import wait_until
from devkit.users import user_make

from apps.audit.models import AuditEvent
from apps.clusters.services import cluster_register, cluster_sync
from apps.kafka_layer.clients import admin_client_create
from apps.plans.models import Plan
from apps.plans.services import plan_request
from tests.faults.site import Site
from tests.support.factories import policy_set

pytestmark = [pytest.mark.browser, pytest.mark.integration]

PASSWORD = "faults-test-pass"
# Long enough for the page's reconnects to back off (1, 2, 4 s...) and for the approval
# meanwhile; the length itself is not what is checked.
DOWN_SECONDS = float(os.environ.get("FAULTS_REDIS_DOWN_SECONDS", "10"))


@pytest.fixture(scope="module")
def site(redis_server, kafka_cluster, django_db_blocker):
    workdir = Path(tempfile.mkdtemp(prefix="it-faults-redis-"))
    site = Site(workdir, redis_server, worker=True)
    with django_db_blocker.unblock():
        site.migrate()
        site.daphne_start()
        site.worker_start()
        try:
            yield site
        finally:
            site.stop()
            shutil.rmtree(workdir, ignore_errors=True)


def _world(bootstrap: str, topic: str) -> int:
    """Users, the dev cluster registered (only `topic` managed) and a proposed plan
    giving broker 3 a copy of the topic's partitions."""
    admin = user_make("ada", "admin", password=PASSWORD)
    user_make("vic", "viewer", password=PASSWORD)
    user_make("anna", "approver", password=PASSWORD)
    cluster = cluster_register(name="prod", bootstrap_servers=bootstrap)
    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    policy_set(cluster, admin, topics_include=[topic])
    return plan_request(cluster=cluster, user=admin, mode="add-brokers", brokers=[3]).pk


def test_it_serves_pages_and_loses_nothing_while_redis_is_down(
    site, kafka_cluster, sign_in, side_traffic, fault_row, fault_survived
):
    fault_row["fault"] = "Redis stopped and restarted"
    bootstrap = kafka_cluster.bootstrap_servers
    admin = admin_client_create(bootstrap_servers=bootstrap)
    topic = live.topic_name("redis")
    live.topic_create(admin, topic, assignment=[[1, 2], [2, 1]] * 3)
    redis = DevCluster()
    try:
        plan_id = site.call(_world, bootstrap, topic)
        url = site.url(f"/clusters/prod/plans/{plan_id}/")
        watcher = sign_in("vic", PASSWORD)
        watcher.goto(url)
        watcher.wait_for_selector('#live-status[data-state="live"]')
        watcher.evaluate("() => { window.notReloaded = true; }")
        approver = sign_in("anna", PASSWORD)
        approver.goto(url)

        stopped = time.monotonic()
        redis.redis_down()
        # Pages still serve; the live badge says the page is no longer live.
        assert approver.request.get(url).status == 200
        watcher.wait_for_selector('#live-status:not([data-state="live"])', timeout=30_000)
        # An approval meanwhile is kept and audited (its enqueue is Redis's loss only).
        approver.fill('form[data-action="approve"] input[name="reason"]', "during the outage")
        approver.click("#approve-button")

        def approved() -> bool:
            plan = Plan.objects.get(pk=plan_id)
            audited = AuditEvent.objects.filter(action="plan.approved", object_id=str(plan_id))
            return plan.state == "approved" and audited.exists()

        wait_until(lambda: site.call(approved), 30, what="the approval recorded and audited")
        assert approver.request.get(site.url("/audit/")).status == 200
        # The outage itself, not a guess at how long something takes.
        wait_until(lambda: time.monotonic() - stopped >= DOWN_SECONDS, DOWN_SECONDS + 5, 1)

        restarted = time.monotonic()
        redis.redis_up()
        watcher.wait_for_selector('#live-status[data-state="live"]', timeout=60_000)
        # What beat's resume sweep does every 30 s, in a process of the site's.
        site.shell("from apps.plans.executor import executions_resume; executions_resume()")

        def completed() -> bool:
            return Plan.objects.get(pk=plan_id).state == "completed"

        try:
            wait_until(lambda: site.call(completed), 120, 1, what="the plan run by the worker")
        except AssertionError:
            state = site.call(lambda: Plan.objects.get(pk=plan_id).state)
            raise AssertionError(f"plan {state}; worker log:\n{site.log('worker')}") from None
        watcher.wait_for_selector('#plan-state-badge[data-state="completed"]', timeout=30_000)
        recovered = time.monotonic() - restarted
        assert watcher.evaluate("() => window.notReloaded") is True
        assert site.worker.poll() is None and site.daphne.poll() is None
    finally:
        live.topics_delete(admin, [topic])
    counts = side_traffic.finish()
    fault_survived(
        counts,
        recovered=recovered,
        recovery=f"Redis back (after {DOWN_SECONDS:g} s down) → page live and the plan "
        "approved meanwhile completed by the worker",
        said=f"recovered {recovered:.1f} s after Redis restarted",
        down_s=DOWN_SECONDS,
    )
