"""`dev-cluster up --secure`: prints what registering the cluster takes, never a secret;
keeps keys and passwords private to the user."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CLI = Path(__file__).resolve().parents[2] / "scripts" / "dev-cluster"


def test_it_prints_the_client_settings_but_no_secret(secure_cluster):
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
