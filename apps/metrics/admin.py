from django.contrib import admin

from .models import AggregationRun, BrokerLoad, MetricsCursor, TopicLoad


class ReadOnlyAdmin(admin.ModelAdmin):
    """Written by the aggregation job only."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(AggregationRun)
class AggregationRunAdmin(ReadOnlyAdmin):
    list_display = (
        "cluster",
        "started_at",
        "finished_at",
        "status",
        "input_rows",
        "output_rows",
        "malformed_rows",
        "late_rows",
        "spark_master",
    )
    list_filter = ("cluster", "status")
    date_hierarchy = "started_at"


@admin.register(TopicLoad)
class TopicLoadAdmin(ReadOnlyAdmin):
    """A topic's window; its partition loads are packed (the API lists them)."""

    list_display = (
        "cluster",
        "window_start",
        "topic",
        "partition_count",
        "network_in",
        "network_out",
    )
    exclude = ("brokers", "partitions")
    list_filter = ("cluster",)
    search_fields = ("topic",)
    date_hierarchy = "window_start"


@admin.register(BrokerLoad)
class BrokerLoadAdmin(ReadOnlyAdmin):
    list_display = (
        "cluster",
        "window_start",
        "broker_id",
        "network_in",
        "network_out",
        "disk",
        "replicas",
        "leaders",
    )
    list_filter = ("cluster", "broker_id")
    date_hierarchy = "window_start"


@admin.register(MetricsCursor)
class MetricsCursorAdmin(ReadOnlyAdmin):
    list_display = ("cluster", "topic", "finalized_until", "updated_at")
