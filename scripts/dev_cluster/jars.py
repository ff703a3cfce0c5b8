"""The Kafka jars the nodes run from: fetched by scripts/fetch-kafka-jars, checked by stamp."""

from __future__ import annotations

import hashlib
import subprocess

from .errors import DevClusterError
from .paths import FETCH_JARS, REPO_ROOT
from .versions import KafkaVersion


def jars_ensure(kafka: KafkaVersion) -> None:
    """Fetch the line's pinned jars unless its cache already holds the pom's set."""
    want = hashlib.sha256(kafka.pom.read_bytes()).hexdigest()
    have = kafka.stamp.read_text().strip() if kafka.stamp.is_file() else ""
    if have == want and any(kafka.libs_dir.glob("kafka_2.13-*.jar")):
        return
    cmd = [str(FETCH_JARS), "--kafka-version", kafka.line]
    result = subprocess.run(cmd, cwd=REPO_ROOT, check=False)
    if result.returncode != 0 or not any(kafka.libs_dir.glob("kafka_2.13-*.jar")):
        raise DevClusterError(
            f"Kafka jars missing in {kafka.libs_dir} and scripts/fetch-kafka-jars failed"
        )


def classpath(kafka: KafkaVersion) -> str:
    return str(kafka.libs_dir / "*")
