"""The java command line every Kafka process of the dev cluster runs with (flags, heap)."""

from __future__ import annotations

from .jars import classpath
from .paths import LOG4J2_CONFIG

# Small heaps: 4 JVMs share a 2-core / 24 GB box with Spark and the tests. SerialGC and
# C1-only JIT cut startup time and thread count; peak throughput doesn't matter here.
JVM_FLAGS = [
    "-Xms64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:+ExitOnOutOfMemoryError",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
    "-Djava.net.preferIPv4Stack=true",
]
BROKER_HEAP = "-Xmx384m"
CONTROLLER_HEAP = "-Xmx256m"
TOOL_HEAP = "-Xmx128m"


def java_command(
    java: str, *, heap: str, main_class: str, args: list[str], sysprops: list[str] = ()
) -> list[str]:
    """`java <heap> <flags> -cp <jars> main_class args...` with Kafka's logging config."""
    return [
        java,
        heap,
        *JVM_FLAGS,
        f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}",
        *sysprops,
        "-cp",
        classpath(),
        main_class,
        *args,
    ]
