from django.contrib import admin

from .models import Broker, Cluster, Partition, Topic


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ("name", "bootstrap_servers", "last_synced_at", "last_sync_error")
    readonly_fields = (
        "kafka_cluster_id",
        "controller_id",
        "last_synced_at",
        "last_sync_error",
        "last_sync_error_at",
    )


@admin.register(Broker)
class BrokerAdmin(admin.ModelAdmin):
    list_display = ("cluster", "node_id", "host", "port", "rack", "alive", "last_seen")
    list_filter = ("cluster", "alive", "rack")
    # Only capacities are the operator's to edit; the rest comes from Kafka.
    readonly_fields = (
        "cluster",
        "node_id",
        "host",
        "port",
        "rack",
        "alive",
        "first_seen",
        "last_seen",
    )


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    list_display = ("name", "cluster", "internal")
    list_filter = ("cluster", "internal")
    search_fields = ("name",)

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Partition)
class PartitionAdmin(admin.ModelAdmin):
    list_display = ("topic", "index", "leader", "replicas", "isr", "offline", "under_replicated")
    list_filter = ("topic__cluster", "offline", "under_replicated")

    def has_change_permission(self, request, obj=None) -> bool:
        return False
