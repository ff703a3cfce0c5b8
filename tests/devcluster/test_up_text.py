"""What `dev-cluster up` prints (no JVM: the text is made from the cluster's layout)."""

from __future__ import annotations

from pathlib import Path

from dev_cluster import DevCluster
from dev_cluster.cli import up_text
from dev_cluster.secure import SecureDevCluster


def test_the_secured_cluster_leads_with_its_secured_listeners(tmp_path: Path) -> None:
    cluster = SecureDevCluster(run_dir=tmp_path / "secure", broker_port_base=29700)
    lines = up_text(cluster, seconds=12.3).splitlines()

    assert lines[0].endswith("up in 12.3s (secured); register it with one of these listeners:")
    sasl_ssl, mtls, plaintext = (cluster.bootstrap(x) for x in ("SASL_SSL", "MTLS", "PLAINTEXT"))
    first = next(i for i, line in enumerate(lines) if "bootstrap" in line or "127.0.0.1" in line)
    assert f"SASL_SSL, SCRAM-SHA-512: bootstrap {sasl_ssl}" in lines[first]
    assert any(f"bootstrap {mtls}" in line for line in lines)
    # The PLAINTEXT list comes once, last, and says it is not for the balancer.
    assert sum(plaintext in line for line in lines) == 1
    assert lines[-1] == (
        "PLAINTEXT, not for the balancer (this tool's metadata checks; its principal "
        f"has no ACL): {plaintext}"
    )


def test_the_plain_cluster_prints_its_bootstrap_list(tmp_path: Path) -> None:
    cluster = DevCluster(run_dir=tmp_path / "plain", broker_port_base=29700)
    assert up_text(cluster, seconds=1).endswith(
        f"up in 1.0s; bootstrap servers {cluster.bootstrap_servers}"
    )
