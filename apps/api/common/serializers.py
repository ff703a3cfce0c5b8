"""The bodies several API domains share: the error answer, the optional reason."""

from rest_framework import serializers


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


class NewerPlanSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    newer_plan = NewerPlanSerializer(
        required=False,
        help_text="A 409 on a superseded or stale plan: the proposal to review instead.",
    )
