from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.audit.services import audit_record, client_address_get

from .connection import REDACTED
from .fields import encrypted_is_set
from .models import Broker, Cluster, Partition, Topic

# Write-only: never rendered back, blank keeps what is stored.
SECRET_FIELDS = ("sasl_password", "ssl_key_pem")
# What an audit event shows of a cluster (secrets as REDACTED or "").
AUDITED_FIELDS = (
    "name",
    "bootstrap_servers",
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "ssl_ca_pem",
    "ssl_certificate_pem",
    "ssl_verify_hostname",
)


class _WriteOnlyTextarea(forms.Textarea):
    def format_value(self, value: Any) -> None:
        return None


class ClusterAdminForm(forms.ModelForm):
    sasl_password = forms.CharField(
        label="SASL password",
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
    )
    forget_sasl_password = forms.BooleanField(label="Forget the stored password", required=False)
    ssl_key_pem = forms.CharField(
        label="Client private key (PEM)", required=False, widget=_WriteOnlyTextarea
    )
    forget_ssl_key_pem = forms.BooleanField(label="Forget the stored key", required=False)

    class Meta:
        model = Cluster
        fields = (
            "name",
            "bootstrap_servers",
            "security_protocol",
            "sasl_mechanism",
            "sasl_username",
            "sasl_password",
            "ssl_ca_pem",
            "ssl_certificate_pem",
            "ssl_key_pem",
            "ssl_verify_hostname",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.secrets_changed: list[str] = []
        for name in SECRET_FIELDS:
            self.initial[name] = ""  # never sent to the page, and blank is "unchanged"
            stored = self.instance.pk and encrypted_is_set(self.instance, name)
            self.fields[name].help_text = (
                "One is stored (encrypted); leave empty to keep it."
                if stored
                else "Stored encrypted."
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # What to store: a new value, nothing (forget), or what is stored, still encrypted.
        for name in SECRET_FIELDS:
            if data.get(f"forget_{name}"):
                data[name] = ""
            elif data.get(name):
                pass
            else:
                data[name] = self.instance.__dict__.get(name) or ""
                continue
            self.secrets_changed.append(name)
        return data


def _audited(cluster: Cluster) -> dict[str, Any]:
    values = {name: getattr(cluster, name) for name in AUDITED_FIELDS}
    for name in SECRET_FIELDS:
        values[name] = REDACTED if encrypted_is_set(cluster, name) else ""
    return values


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    form = ClusterAdminForm
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
        self, request: HttpRequest, obj: Cluster, form: ClusterAdminForm, change: bool
    ) -> None:
        before = _audited(Cluster.objects.get(pk=obj.pk)) if change else {}
        super().save_model(request, obj, form, change)
        after = _audited(obj)
        changed = [k for k in after if before.get(k) != after[k]] + [
            k for k in form.secrets_changed if before.get(k) == after[k]
        ]
        if change and not changed:
            return
        audit_record(
            actor=request.user,
            action="cluster.changed" if change else "cluster.created",
            obj=obj,
            before={k: before[k] for k in changed} if change else None,
            after={k: after[k] for k in changed} if change else after,
            client_address=client_address_get(request=request),
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
