"""What the API shows of a cluster's state, with the partition query it accepts."""

from rest_framework import serializers

from apps.clusters.models import Broker, Cluster, Partition
from apps.core.bounds import BROKER_ID_MAX


class ClusterSerializer(serializers.ModelSerializer):
    """A cluster and its health at a glance (client_config is never shown)."""

    reachable = serializers.BooleanField(read_only=True)

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "bootstrap_servers",
            "kafka_cluster_id",
            "controller_id",
            "created_at",
            "last_synced_at",
            "last_sync_error",
            "last_sync_error_at",
            "reachable",
        ]


class PlanBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.CharField()
    mode = serializers.CharField()
    trigger = serializers.CharField()
    bytes_to_move = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class ClusterHealthSerializer(serializers.Serializer):
    cluster = ClusterSerializer()
    healthy = serializers.BooleanField()
    brokers_alive = serializers.IntegerField()
    brokers_total = serializers.IntegerField()
    topics = serializers.IntegerField()
    partitions = serializers.IntegerField()
    offline = serializers.IntegerField()
    under_replicated = serializers.IntegerField()
    balance = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="Per resource: busiest alive broker over the mean (1.0 is perfect).",
    )
    open_plan = PlanBriefSerializer(allow_null=True)
    running_plan = PlanBriefSerializer(allow_null=True)


class BrokerSerializer(serializers.ModelSerializer):
    class Meta:
        model = Broker
        fields = [
            "node_id",
            "host",
            "port",
            "rack",
            "alive",
            "first_seen",
            "last_seen",
            "capacity_network_in",
            "capacity_network_out",
            "capacity_disk",
        ]


class LogDirRowSerializer(serializers.Serializer):
    path = serializers.CharField()
    used = serializers.IntegerField(help_text="bytes of the replicas in the dir")
    total = serializers.IntegerField(allow_null=True, help_text="bytes of its volume")
    usable = serializers.IntegerField(allow_null=True, help_text="free bytes for Kafka")
    online = serializers.BooleanField()
    used_pct = serializers.FloatField(allow_null=True)


class BrokerRowSerializer(serializers.Serializer):
    broker = BrokerSerializer()
    replicas = serializers.IntegerField()
    leaders = serializers.IntegerField()
    replica_skew_pct = serializers.FloatField(allow_null=True)
    leader_skew_pct = serializers.FloatField(allow_null=True)
    log_dirs = LogDirRowSerializer(
        many=True, allow_null=True, help_text="its disks (JBOD); null: never read"
    )


class TopicRowSerializer(serializers.Serializer):
    name = serializers.CharField(source="topic.name")
    internal = serializers.BooleanField(source="topic.internal")
    partitions = serializers.IntegerField()
    replication_factor = serializers.IntegerField()
    offline = serializers.IntegerField()
    under_replicated = serializers.IntegerField()


class PartitionSerializer(serializers.ModelSerializer):
    topic = serializers.CharField(source="topic.name")

    class Meta:
        model = Partition
        fields = ["topic", "index", "leader", "replicas", "isr", "offline", "under_replicated"]


class PartitionQuerySerializer(serializers.Serializer):
    topic = serializers.CharField(required=False, max_length=249)
    broker = serializers.IntegerField(required=False, min_value=0, max_value=BROKER_ID_MAX)
