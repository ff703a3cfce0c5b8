"""What the API shows of a drained broker."""

from rest_framework import serializers


class DrainedBrokerSerializer(serializers.Serializer):
    node_id = serializers.IntegerField()
    drained_at = serializers.DateTimeField()
    drained_by = serializers.CharField(help_text="Who requested (else approved) the drain.")
    plan_id = serializers.IntegerField(allow_null=True, help_text="The remove-brokers plan.")
    replicas = serializers.IntegerField(help_text="Replicas it holds now: 0 while kept empty.")
