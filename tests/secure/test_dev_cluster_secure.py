"""`dev-cluster up --secure`: prints what registering the cluster takes, never a secret;
keeps keys and passwords private to the user; hands leadership back after a restart."""

import os
import stat
import subprocess
import uuid
from pathlib import Path

import pytest
from devkit import live
from devkit.polling import wait_until

from tests.devcluster.test_leaders_and_heap import ASSIGNMENT, leaders

pytestmark = pytest.mark.integration

CLI = Path(__file__).resolve().parents[2] / "scripts" / "dev-cluster"


@pytest.fixture
def auto_start_kept(secure_cluster):
    """`up` from the CLI marks the cluster as wanted by a person; put back the session's
    mark, so a cluster the session started is still stopped at its end."""
    mark = secure_cluster.lease_dir / "kafka.auto-started"
    had = mark.exists()
    yield
    if had:
        mark.touch()


def test_it_prints_the_client_settings_but_no_secret(secure_cluster, auto_start_kept):
    result = subprocess.run(
        [str(CLI), "up", "--secure", "--no-redis"],
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ),
    )

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert f"CA certificate (PEM): {secure_cluster.ca_path}" in out
    assert f"bootstrap {secure_cluster.bootstrap('SASL_SSL')}" in out
    assert f"bootstrap {secure_cluster.bootstrap('MTLS')}" in out
    assert "user balancer" in out
    for user in ("admin", "balancer", "balancer-no-alter"):
        assert secure_cluster.password(user) not in out + result.stderr
    assert "PRIVATE KEY" not in out + result.stderr


def test_it_keeps_keys_and_passwords_readable_by_the_user_only(secure_cluster):
    pki = secure_cluster.run_dir / "pki"
    private = [secure_cluster.run_dir / "users.json", pki / "broker-keystore.pem"]
    private += sorted(pki.glob("*.key"))

    assert len(private) == 8  # the CA's, the brokers' and 4 clients' keys
    assert stat.S_IMODE(pki.stat().st_mode) == 0o700
    for path in private:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_it_gives_leadership_back_to_a_broker_restarted_by_up(secure_cluster, super_admin):
    # ACLs are on: the election must run as a principal that sees the topics.
    topic = f"it-secure-leaders-{uuid.uuid4().hex[:8]}"
    config = secure_cluster.admin_config()
    live.topic_create(super_admin, topic, assignment=ASSIGNMENT, config=config)
    preferred = {p: replicas[0] for p, replicas in enumerate(ASSIGNMENT)}
    try:
        wait_until(lambda: leaders(super_admin, topic) == preferred, 30, 0.2, what="preferred")
        secure_cluster.stop_broker(2)  # controlled shutdown moves its leaderships away
        wait_until(lambda: 2 not in leaders(super_admin, topic).values(), 30, 0.2, what="moved")

        election = secure_cluster.up(redis=False)

        assert leaders(super_admin, topic) == preferred
        assert election is not None and election.elected >= 4 and election.pending == 0
    finally:
        secure_cluster.start_broker(2)
        super_admin.delete_topics([topic])
