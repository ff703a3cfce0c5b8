from rest_framework import serializers

from apps.api.metrics.serializers import BrokerLoadQuerySerializer


class CanaryQuerySerializer(BrokerLoadQuerySerializer):
    """Rounds at or after `since` and before `until`."""


class CanaryWindowSerializer(serializers.Serializer):
    broker_id = serializers.IntegerField()
    at = serializers.DateTimeField()
    sent = serializers.IntegerField()
    acked = serializers.IntegerField()
    received = serializers.IntegerField()
    errors = serializers.IntegerField()
    availability = serializers.FloatField(help_text="Share of the round's writes acknowledged.")
    produce_p50_ms = serializers.FloatField(allow_null=True)
    produce_p99_ms = serializers.FloatField(allow_null=True)
    end_to_end_p50_ms = serializers.FloatField(allow_null=True)
    end_to_end_p99_ms = serializers.FloatField(allow_null=True)
    last_error = serializers.CharField()


class CanaryBandSerializer(serializers.Serializer):
    broker_id = serializers.IntegerField()
    baseline_ms = serializers.FloatField(
        allow_null=True, help_text="Moving average of the broker's p99 while in its band."
    )
    top_ms = serializers.FloatField(help_text="The band's top: max(baseline x factor, floor).")
    outside = serializers.BooleanField(help_text="The last rounds put the broker out of it.")
    changed_at = serializers.DateTimeField(help_text="When it last left or came back.")
