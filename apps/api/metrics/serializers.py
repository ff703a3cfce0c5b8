"""What the API shows of measured load, with the queries that select it."""

from rest_framework import serializers

from apps.core.bounds import INT32_MAX
from apps.metrics.selectors import HEATMAP_LIMIT_MAX, HEATMAP_METRICS, HEATMAP_SORTS


class StampedQuerySerializer(serializers.Serializer):
    stamp = serializers.CharField(
        default="",
        allow_blank=True,
        max_length=200,
        help_text="The cluster state the page shows, `<model>|<window>` as pushed on its "
        "websocket: answers for one stamp are built once and shared by every viewer.",
    )


class HeatmapQuerySerializer(StampedQuerySerializer):
    metric = serializers.ChoiceField(choices=list(HEATMAP_METRICS), default="replicas")
    internal = serializers.BooleanField(default=True, help_text="Include internal topics.")
    search = serializers.CharField(default="", allow_blank=True, max_length=249)
    sort = serializers.ChoiceField(choices=list(HEATMAP_SORTS), default="load")
    limit = serializers.IntegerField(default=50, min_value=1, max_value=HEATMAP_LIMIT_MAX)
    offset = serializers.IntegerField(default=0, min_value=0, max_value=INT32_MAX)


class HeatmapSerializer(serializers.Serializer):
    metric = serializers.CharField()
    label = serializers.CharField()
    unit = serializers.CharField()
    brokers = serializers.ListField(child=serializers.IntegerField())
    broker_alive = serializers.ListField(child=serializers.BooleanField())
    topics = serializers.ListField(child=serializers.CharField())
    z = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="z[topic][broker], in the order of `topics` and `brokers`.",
    )
    window_end = serializers.CharField(help_text="End of the traffic window; empty for counts.")
    topics_total = serializers.IntegerField(help_text="Topics matching the search.")
    offset = serializers.IntegerField()
    other = serializers.ListField(
        child=serializers.FloatField(),
        help_text="The matching topics not on this page, summed per broker; empty when none.",
    )
    other_topics = serializers.IntegerField()


class TrafficQuerySerializer(StampedQuerySerializer):
    windows = serializers.IntegerField(default=60, min_value=1, max_value=360)


class BrokerTrafficSerializer(serializers.Serializer):
    windows = serializers.ListField(child=serializers.CharField(), help_text="Window ends.")
    series = serializers.DictField(
        child=serializers.DictField(
            child=serializers.ListField(child=serializers.FloatField(allow_null=True))
        ),
        help_text="broker id -> network_in / network_out / messages_in -> values per window.",
    )


class BrokerLoadSerializer(serializers.Serializer):
    broker_id = serializers.IntegerField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    network_in = serializers.FloatField()
    network_out = serializers.FloatField()
    disk = serializers.IntegerField()
    replicas = serializers.IntegerField()
    leaders = serializers.IntegerField()


class PartitionLoadSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    samples = serializers.IntegerField()
    leader = serializers.IntegerField(allow_null=True)
    replicas = serializers.ListField(child=serializers.IntegerField())
    messages_in = serializers.FloatField(allow_null=True)
    bytes_in = serializers.FloatField(allow_null=True)
    bytes_out = serializers.FloatField(allow_null=True)
    size = serializers.IntegerField(allow_null=True)


class BrokerLoadQuerySerializer(serializers.Serializer):
    since = serializers.DateTimeField(required=False, help_text="Windows starting at or after.")
    until = serializers.DateTimeField(required=False, help_text="Windows starting before.")

    def validate(self, attrs: dict) -> dict:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError("since must be before until")
        return attrs


class LoadQuerySerializer(BrokerLoadQuerySerializer):
    topic = serializers.CharField(required=False, max_length=249)
