from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from apps.audit.services import client_address_get

from .editing import ClusterRemovalRefused, cluster_delete, cluster_save
from .forms import ClusterForm
from .models import Broker, Cluster, Partition, Topic


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    form = ClusterForm
    list_display = ("name", "bootstrap_servers", "security_protocol", "last_synced_at")
    readonly_fields = (
        "kafka_cluster_id",
        "controller_id",
        "last_synced_at",
        "last_sync_error",
        "last_sync_error_at",
    )
    fieldsets = (
        (None, {"fields": ("name", "bootstrap_servers")}),
        (
            "Connection",
            {
                "fields": (
                    "security_protocol",
                    "sasl_mechanism",
                    "sasl_username",
                    "sasl_password",
                    "forget_sasl_password",
                    "ssl_ca_pem",
                    "ssl_certificate_pem",
                    "ssl_key_pem",
                    "forget_ssl_key_pem",
                    "ssl_verify_hostname",
                )
            },
        ),
        ("Last sync", {"fields": readonly_fields}),
    )

    def save_model(
        self, request: HttpRequest, obj: Cluster, form: ClusterForm, change: bool
    ) -> None:
        cluster_save(
            actor=request.user,
            cluster=obj,
            secrets_changed=form.secrets_changed,
            client_address=client_address_get(request=request),
        )

    def delete_model(self, request: HttpRequest, obj: Cluster) -> None:
        try:
            cluster_delete(
                actor=request.user, cluster=obj, client_address=client_address_get(request=request)
            )
        except ClusterRemovalRefused as exc:
            request.cluster_removal_refused = (
                f"{obj.name} not deleted: {exc}"  # for response_delete
            )

    def response_delete(self, request: HttpRequest, obj_display: str, obj_id: Any) -> HttpResponse:
        refused = getattr(request, "cluster_removal_refused", "")
        if refused:
            self.message_user(request, refused, messages.ERROR)
            return HttpResponseRedirect(request.path.rsplit("/delete/", 1)[0] + "/change/")
        return super().response_delete(request, obj_display, obj_id)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        for cluster in queryset:
            self.delete_model(request, cluster)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple:
        # What a cluster owns (its policy, plans, loads) goes with it: deleting the
        # cluster is the permission that counts, not one to delete each of those by
        # hand, which their admins rightly refuse.
        deleted, counts, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected


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
