"""What the API shows of a demoted broker."""

from rest_framework import serializers


class DemotedBrokerSerializer(serializers.Serializer):
    node_id = serializers.IntegerField()
    demoted_at = serializers.DateTimeField()
    demoted_by = serializers.CharField(help_text="Who requested (else approved) the demotion.")
    plan_id = serializers.IntegerField(allow_null=True, help_text="The demote plan.")
    leaders = serializers.IntegerField(help_text="Partitions it leads now: 0 while kept off.")
