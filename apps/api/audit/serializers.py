"""An audit event as the API shows it, with the query that filters the trail."""

from rest_framework import serializers

from apps.audit.models import AuditEvent
from apps.audit.selectors import EXPORT_FIELDS


class AuditQuerySerializer(serializers.Serializer):
    cluster = serializers.SlugField(required=False, max_length=100)
    actor = serializers.CharField(required=False, max_length=255)
    action = serializers.CharField(required=False, max_length=100, help_text="prefix")
    object_type = serializers.CharField(required=False, max_length=100)
    object_id = serializers.CharField(required=False, max_length=100)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)


class AuditEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditEvent
        # The same public shape as the CSV / JSON export.
        fields = list(EXPORT_FIELDS)
