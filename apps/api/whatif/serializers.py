"""A what-if simulation as the API accepts it, with the answer it shows."""

from rest_framework import serializers

from apps.core.bounds import BROKER_ID_MAX
from apps.plans.whatif import WHATIF_BROKERS_MAX


class WhatIfBrokerSerializer(serializers.Serializer):
    id = serializers.IntegerField(min_value=0, max_value=BROKER_ID_MAX)
    rack = serializers.CharField(required=False, allow_null=True, max_length=255, default=None)


class WhatIfRequestSerializer(serializers.Serializer):
    add_brokers = WhatIfBrokerSerializer(
        many=True, required=False, default=list, max_length=WHATIF_BROKERS_MAX
    )
    remove_brokers = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=BROKER_ID_MAX),
        required=False,
        default=list,
        max_length=WHATIF_BROKERS_MAX,
    )
    traffic_scale = serializers.FloatField(
        required=False, default=1.0, min_value=0.01, max_value=100
    )


class LoadsBeforeAfterSerializer(serializers.Serializer):
    brokers = serializers.ListField(child=serializers.IntegerField())
    before = serializers.DictField(child=serializers.ListField(child=serializers.FloatField()))
    after = serializers.DictField(child=serializers.ListField(child=serializers.FloatField()))


class WhatIfSerializer(serializers.Serializer):
    mode = serializers.CharField()
    brokers = serializers.ListField(child=serializers.IntegerField())
    traffic_scale = serializers.FloatField()
    plan = serializers.JSONField(help_text="Kafka's reassignment JSON; nothing is proposed.")
    report = serializers.JSONField()
    loads = LoadsBeforeAfterSerializer()
