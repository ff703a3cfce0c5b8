import signal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.clusters.models import Cluster
from apps.kafka_layer.clients import KafkaException, admin_client_create
from apps.kafka_layer.connection import ConnectionSettings
from apps.kafka_layer.demo_traffic import (
    TrafficError,
    demo_topic_configs,
    rate_parse,
    skew_weights,
    topic_ensure,
    topic_partition_count,
    traffic_produce,
)


class Command(BaseCommand):
    help = "Create a demo topic and produce records to it at a given rate and skew (acks=all)."

    def add_arguments(self, parser: CommandParser) -> None:
        target = parser.add_mutually_exclusive_group()
        target.add_argument(
            "--bootstrap-servers",
            default=settings.KAFKA_BOOTSTRAP_SERVERS,
            help="an unsecured (PLAINTEXT) cluster; default: the dev cluster",
        )
        target.add_argument(
            "--cluster", help="a registered cluster, reached with its connection settings"
        )
        parser.add_argument("--topic", default="demo-orders")
        parser.add_argument("--partitions", type=int, default=16)
        parser.add_argument("--replication-factor", type=int, default=2)
        parser.add_argument("--rate", default="5120/s", help="records per second, e.g. 5000/s")
        parser.add_argument("--record-size", type=int, default=1024, help="bytes per record")
        parser.add_argument(
            "--skew",
            default="uniform",
            help="uniform | zipf:S | hot:K:F | weights:w0,w1,... (one per partition)",
        )
        parser.add_argument(
            "--duration", type=float, default=None, help="seconds; default: until interrupted"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--retention-bytes",
            type=int,
            default=24 * 1024 * 1024,
            help="bytes the topic keeps per partition (default 24 MiB: 16 partitions x RF 2 "
            "stay under ~2 GB on disk however long it runs)",
        )
        parser.add_argument(
            "--retention-ms",
            type=int,
            default=3_600_000,
            help="how long the topic keeps a record (default 1 h)",
        )

    def handle(self, *args, **options) -> None:
        try:
            rate = rate_parse(options["rate"])
            weights = skew_weights(options["skew"], options["partitions"])
        except TrafficError as exc:
            raise CommandError(str(exc)) from exc
        if options["partitions"] < 1 or options["replication_factor"] < 1:
            raise CommandError("partitions and replication factor must be at least 1")
        if options["retention_bytes"] < 1024 * 1024 or options["retention_ms"] < 60_000:
            raise CommandError("retention must be at least 1 MiB and 60000 ms")

        connection = self._connection(options)
        admin = admin_client_create(connection=connection)
        topic = options["topic"]
        timeout = settings.KAFKA_REQUEST_TIMEOUT
        try:
            existing = topic_partition_count(admin=admin, topic=topic, timeout=timeout)
        except KafkaException as exc:
            raise CommandError(f"cannot read topic {topic}: {exc.args[0]}") from exc
        # An existing topic is produced to on the partitions it has, whatever --partitions
        # says; a skew is spread over them, and nothing is changed when it cannot be.
        partitions = existing or options["partitions"]
        if partitions != options["partitions"]:
            try:
                weights = skew_weights(options["skew"], partitions)
            except TrafficError as exc:
                raise CommandError(
                    f"topic {topic} has {partitions} partitions, not {options['partitions']}: "
                    f"{exc} (pass --partitions {partitions} with a skew for them)"
                ) from exc
            self.stdout.write(
                f"topic {topic} exists with {partitions} partitions: producing to those "
                f"(--partitions {options['partitions']} applies to a new topic only)"
            )
        try:
            created = topic_ensure(
                admin=admin,
                topic=topic,
                partitions=partitions,
                replication_factor=options["replication_factor"],
                timeout=timeout,
                configs=demo_topic_configs(
                    retention_bytes=options["retention_bytes"],
                    retention_ms=options["retention_ms"],
                ),
            )
        except KafkaException as exc:
            raise CommandError(f"cannot create topic {topic}: {exc.args[0]}") from exc
        self.stdout.write(
            f"{'created' if created else 'using'} topic {topic}; producing "
            f"{rate:g} records/s of {options['record_size']} B with skew {options['skew']}"
        )

        stopping = False

        def stop(*_args) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        stats = traffic_produce(
            connection=connection,
            topic=topic,
            partitions=partitions,
            rate=rate,
            record_size=options["record_size"],
            weights=weights,
            duration=options["duration"],
            seed=options["seed"],
            should_stop=lambda: stopping,
        )
        self.stdout.write(
            f"sent {stats.sent}, acked {stats.acked}, failed {stats.failed} "
            f"in {stats.elapsed:.1f} s ({stats.acked / max(stats.elapsed, 1e-9):.0f} acked/s)"
        )
        if stats.failed:
            raise CommandError(f"{stats.failed} records failed: {'; '.join(stats.errors)}")

    def _connection(self, options: dict) -> ConnectionSettings:
        if not options["cluster"]:
            return ConnectionSettings(bootstrap_servers=options["bootstrap_servers"])
        cluster = Cluster.objects.filter(name=options["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no cluster named {options['cluster']!r} is registered")
        return cluster.connection
