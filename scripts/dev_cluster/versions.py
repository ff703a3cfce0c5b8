"""The Kafka release lines the dev cluster can run: each one's pinned pom, jar cache,
logging setup and the node properties it does not know."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .errors import DevClusterError
from .paths import CACHE_DIR, KAFKA_POM, LOG4J2_CONFIG, REPO_ROOT, SCRIPTS_DIR


@dataclass(frozen=True)
class KafkaVersion:
    line: str  # "4.3", "3.9": what --kafka-version takes
    pom: Path
    cache_dir: Path
    log_sysprop: str  # points the JVM's logging at our config
    unknown_props: frozenset[str] = frozenset()  # dropped from node.properties

    @property
    def libs_dir(self) -> Path:
        return self.cache_dir / "libs"

    @property
    def stamp(self) -> Path:
        return self.cache_dir / "libs.sha256"

    @cached_property
    def release(self) -> str:
        """The exact pinned release, e.g. 3.9.2 (read from the pom)."""
        match = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", self.pom.read_text())
        return match.group(1) if match else self.line


KAFKA_VERSIONS: dict[str, KafkaVersion] = {
    "4.3": KafkaVersion(
        line="4.3",
        pom=KAFKA_POM,
        cache_dir=CACHE_DIR,
        log_sysprop=f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}",
    ),
    # The last 3.x line: logs through log4j 1.x (reload4j); has no share groups yet.
    "3.9": KafkaVersion(
        line="3.9",
        pom=SCRIPTS_DIR / "kafka-3.9" / "pom.xml",
        cache_dir=REPO_ROOT / ".cache" / "kafka-3.9",
        log_sysprop=f"-Dlog4j.configuration=file:{SCRIPTS_DIR / 'kafka-3.9' / 'log4j.properties'}",
        unknown_props=frozenset(
            {
                "share.coordinator.state.topic.replication.factor",
                "share.coordinator.state.topic.num.partitions",
            }
        ),
    ),
}
DEFAULT_KAFKA_VERSION = "4.3"


def kafka_version_line(text: str) -> str:
    """The release line of "3.9", "3.9.2", "4.3.1", ...; a clear error for anything else."""
    for line, version in KAFKA_VERSIONS.items():
        if text in (line, version.release):
            return line
    known = ", ".join(f"{v.line} ({v.release})" for v in KAFKA_VERSIONS.values())
    raise DevClusterError(f"unknown Kafka version {text!r} (known: {known})")
