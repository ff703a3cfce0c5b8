"""The Kafka jars the nodes run from: fetched by scripts/fetch-kafka-jars, checked by stamp."""

from __future__ import annotations

import hashlib
import subprocess

from .errors import DevClusterError
from .paths import FETCH_JARS, KAFKA_POM, LIBS_DIR, LIBS_STAMP, REPO_ROOT


def jars_ensure() -> None:
    """Fetch the pinned jars unless the cache already holds the pom's set."""
    want = hashlib.sha256(KAFKA_POM.read_bytes()).hexdigest()
    have = LIBS_STAMP.read_text().strip() if LIBS_STAMP.is_file() else ""
    if have == want and any(LIBS_DIR.glob("kafka_2.13-*.jar")):
        return
    result = subprocess.run([str(FETCH_JARS)], cwd=REPO_ROOT, check=False)
    if result.returncode != 0 or not any(LIBS_DIR.glob("kafka_2.13-*.jar")):
        raise DevClusterError(
            f"Kafka jars missing in {LIBS_DIR} and scripts/fetch-kafka-jars failed"
        )


def classpath() -> str:
    return str(LIBS_DIR / "*")
