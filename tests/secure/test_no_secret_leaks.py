"""After a run on the secured cluster (clusters added in the admin, synced, sampled, a plan
executed, a plan failing on a missing ACL, a wrong password), no SASL password and no
line of a private key appears in any page, API response, log written in the run, audit
row or export. Logs: every logging record at DEBUG, the process's stdout/stderr (what
librdkafka writes; a worker's log file), and what the brokers logged meanwhile."""

import io
import json
import logging
import uuid
from pathlib import Path

import pytest
from devkit import live
from django.core.management import call_command

from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster
from apps.clusters.services import cluster_sync
from apps.metrics.services import metrics_sample
from apps.plans.executor import execution_run
from apps.plans.models import Plan, PlanState
from apps.plans.services import plan_approve, plan_request
from tests.secure.conftest import leftovers_clean
from tests.support.factories import policy_set

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

ON_ONE_AND_TWO = [[1, 2], [2, 1]] * 2
WRONG_PASSWORD = "Wr0ng-" + uuid.uuid4().hex


def secrets_of(secure_cluster) -> dict[str, str]:
    """Every secret text of the run: the passwords and each line of each key's body."""
    found = {
        f"password of {u}": secure_cluster.password(u) for u in ("balancer", "balancer-no-alter")
    }
    found["wrong password"] = WRONG_PASSWORD
    for name in ("balancer", "balancer-no-alter"):
        settings = secure_cluster.client_settings(listener="MTLS", principal=name)
        certificate = settings["ssl_certificate_pem"].replace("\n", "")
        for i, line in enumerate(settings["ssl_key_pem"].strip().splitlines()[1:-1]):
            # An EC key's PKCS#8 ends with its public key, which the certificate carries:
            # a line found in the certificate is public.
            if line not in certificate:
                found[f"line {i} of {name}'s key"] = line
    return found


def admin_add(client, secure_cluster, *, name, listener, principal, password=None) -> Cluster:
    settings = secure_cluster.client_settings(listener=listener, principal=principal)
    if password is not None:
        settings["sasl_password"] = password
    form = {"name": name, "ssl_verify_hostname": "on", **settings}
    response = client.post("/admin/clusters/cluster/add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    return Cluster.objects.get(name=name)


@pytest.fixture
def run_log(tmp_path):
    """Everything logged during the test, at DEBUG, into a file of the run."""
    path = tmp_path / "run.log"
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    # Even the loggers the settings quieten (kafka-python's) speak at DEBUG here.
    loggers = [root] + [logging.getLogger(n) for n in ("kafka", "apps", "django", "py4j")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
    yield path
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)
    root.removeHandler(handler)
    handler.close()


@pytest.fixture
def topic(secure_cluster, super_admin):
    name = f"it-secure-leaks-{uuid.uuid4().hex[:8]}"
    config = secure_cluster.admin_config()
    live.topic_create(super_admin, name, assignment=ON_ONE_AND_TWO, config=config)
    yield name
    leftovers_clean(secure_cluster, [name])
    super_admin.delete_topics([name])[name].result(30)


def broker_log_offsets(secure_cluster) -> dict[Path, int]:
    return {
        secure_cluster.log_file(n): secure_cluster.log_file(n).stat().st_size
        for n in secure_cluster.nodes
        if secure_cluster.log_file(n).exists()
    }


def plan_run(cluster, user, topic) -> Plan:
    assert cluster_sync(cluster=cluster), cluster.last_sync_error
    policy_set(cluster, user, topics_include=[topic], four_eyes=False)
    plan = plan_request(cluster=cluster, user=user, mode="add-brokers", brokers=[3])
    plan_approve(plan=plan, user=user)
    return execution_run(plan=plan, poll_interval=0.5, max_seconds=120)


def test_it_shows_and_logs_no_password_and_no_private_key(
    secure_cluster, client, admin_user, topic, run_log, capfd
):
    logs_before = broker_log_offsets(secure_cluster)
    client.force_login(admin_user)
    sasl = admin_add(
        client, secure_cluster, name="leak-sasl", listener="SASL_SSL", principal="balancer"
    )
    mtls = admin_add(
        client, secure_cluster, name="leak-mtls", listener="MTLS", principal="balancer"
    )
    denied = admin_add(
        client, secure_cluster, name="leak-no-alter", listener="MTLS", principal="balancer-no-alter"
    )
    wrong = admin_add(
        client,
        secure_cluster,
        name="leak-wrong",
        listener="SASL_SSL",
        principal="balancer-no-alter",
        password=WRONG_PASSWORD,
    )

    assert not cluster_sync(cluster=wrong)
    for cluster in (sasl, mtls):
        assert cluster_sync(cluster=cluster), cluster.last_sync_error
        metrics_sample(cluster=cluster)
    # The denied plan first: it changes nothing, so the second has the same moves to make.
    failed = plan_run(denied, admin_user, topic)
    assert failed.state == PlanState.FAILED and "needs Alter on Cluster" in failed.error
    done = plan_run(sasl, admin_user, topic)
    assert done.state == PlanState.COMPLETED, done.error

    texts: dict[str, str] = {}
    pages = [
        "/",
        "/audit/",
        "/notifications/",
        "/admin/clusters/cluster/",
        "/admin/audit/auditevent/",
    ]
    api = ["/api/clusters/", "/api/audit/"]
    for cluster in (sasl, mtls, denied, wrong):
        pages += [f"/clusters/{cluster.name}/", f"/clusters/{cluster.name}/what-if/"]
        pages += [f"/admin/clusters/cluster/{cluster.pk}/change/"]
        api += [
            f"/api/clusters/{cluster.name}/{part}"
            for part in ("", "brokers/", "topics/", "partitions/", "plans/")
        ]
    for plan in (done, failed):
        pages.append(f"/clusters/{plan.cluster.name}/plans/{plan.pk}/")
        api += [f"/api/plans/{plan.pk}/{part}" for part in ("", "moves/", "reassignment/")]
    for url in pages + api + ["/audit/export.csv", "/audit/export.json"]:
        response = client.get(url)
        assert response.status_code == 200, url
        body = b"".join(response) if response.streaming else response.content
        texts[url] = body.decode()
    dump = io.StringIO()
    call_command("dumpdata", stdout=dump)
    texts["dumpdata"] = dump.getvalue()
    texts["audit rows"] = json.dumps(list(AuditEvent.objects.values()), default=str)
    assert AuditEvent.objects.filter(action="cluster.created").count() == 4
    texts["run log"] = run_log.read_text()
    # What a worker's log file would get besides the logging records (librdkafka, JVMs).
    texts["stdout and stderr"] = "".join(capfd.readouterr())
    assert "apps.plans.executor.runner WARNING" in texts["run log"]  # the log was written
    for path in broker_log_offsets(secure_cluster):
        with open(path, errors="replace") as log:
            log.seek(logs_before.get(path, 0))
            texts[str(path)] = log.read()

    leaks = [
        f"{what} in {where}"
        for what, secret in secrets_of(secure_cluster).items()
        for where, text in texts.items()
        if secret in text
    ]
    assert leaks == []
    # The secrets searched for are the ones the clients used, the keys' private part too.
    assert sum(what.startswith("line") for what in secrets_of(secure_cluster)) >= 4
    assert Cluster.objects.get(pk=sasl.pk).sasl_password == secure_cluster.password("balancer")
