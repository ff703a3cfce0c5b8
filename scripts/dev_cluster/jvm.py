"""The java command line every Kafka process of the dev cluster runs with (flags, heap)."""

from __future__ import annotations

from .jars import classpath
from .versions import KafkaVersion

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
CONTROLLER_HEAP = "-Xmx256m"
TOOL_HEAP = "-Xmx128m"

# A broker's heap cap grows with the partition replicas it holds (each keeps live heap).
# -Xmx is only a cap: with SerialGC and -Xms64m the heap grows as needed, so an idle
# 3-broker cluster still uses little per broker while one that is given many
# partitions after `up` has room for them.
BROKER_HEAP_MIN_MB = 1024
BROKER_HEAP_BASE_MB = 512
BROKER_HEAP_PER_REPLICA_KB = 64
BROKER_HEAP_MAX_MB = 4096


def broker_heap_auto(replicas_held: int) -> str:
    """The -Xmx of a broker that holds replicas_held partition replicas on disk."""
    mb = BROKER_HEAP_BASE_MB + replicas_held * BROKER_HEAP_PER_REPLICA_KB // 1024
    return f"-Xmx{min(max(mb, BROKER_HEAP_MIN_MB), BROKER_HEAP_MAX_MB)}m"


def heap_flag(size: str) -> str:
    """`-Xmx<size>` for a size such as 768m or 2g (validated by the options)."""
    return f"-Xmx{size.lower()}"


def java_command(
    java: str,
    *,
    kafka: KafkaVersion,
    heap: str,
    main_class: str,
    args: list[str],
    sysprops: tuple[str, ...] = (),
) -> list[str]:
    """`java <heap> <flags> -cp <jars> main_class args...` with Kafka's logging config."""
    return [
        java,
        heap,
        *JVM_FLAGS,
        kafka.log_sysprop,
        *sysprops,
        "-cp",
        classpath(kafka),
        main_class,
        *args,
    ]
