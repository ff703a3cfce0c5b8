"""Admin: policies are edited here (audited through the service); plans, moves and
executions are view-only, since every change to them goes through the lifecycle."""

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.audit.services import audit_record, client_address_get

from .actions import PolicyAction
from .errors import PlanServiceError
from .models import ClusterPolicy, Execution, Plan, PlanMove
from .services import POLICY_FIELDS, policy_update, policy_validate


class ClusterPolicyForm(forms.ModelForm):
    class Meta:
        model = ClusterPolicy
        fields = ("cluster", *POLICY_FIELDS)

    def clean(self):
        data = super().clean()
        values = {f: data.get(f) for f in POLICY_FIELDS if f in data}
        for field in ("goals", "topics_include", "topics_exclude", "excluded_brokers"):
            values[field] = values.get(field) or []
        values["goal_thresholds"] = values.get("goal_thresholds") or {}
        try:
            policy_validate(values=values)
        except PlanServiceError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data


@admin.register(ClusterPolicy)
class ClusterPolicyAdmin(admin.ModelAdmin):
    form = ClusterPolicyForm
    list_display = (
        "cluster",
        "detection_enabled",
        "detection_interval",
        "dead_broker_grace",
        "auto_approve_self_healing",
        "four_eyes",
        "throttle_bytes_per_sec",
    )
    readonly_fields = ("last_detection_at", "updated_at")

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # The cluster of an existing policy is fixed.
        return (*self.readonly_fields, "cluster") if obj else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: ClusterPolicy, form, change: bool) -> None:
        address = client_address_get(request=request)
        if not change:
            super().save_model(request, obj, form, change)
            audit_record(
                actor=request.user,
                action=PolicyAction.CREATED,
                obj=obj,
                after={f: getattr(obj, f) for f in POLICY_FIELDS},
                client_address=address,
            )
            return
        stored = ClusterPolicy.objects.get(pk=obj.pk)
        changes = {
            f: getattr(obj, f) for f in POLICY_FIELDS if getattr(obj, f) != getattr(stored, f)
        }
        policy_update(policy=stored, actor=request.user, changes=changes, client_address=address)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class _ViewOnly(admin.ModelAdmin):
    actions = None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Plan)
class PlanAdmin(_ViewOnly):
    list_display = ("id", "cluster", "mode", "origin", "state", "bytes_to_move", "created_at")
    list_filter = ("cluster", "state", "mode", "origin")


@admin.register(PlanMove)
class PlanMoveAdmin(_ViewOnly):
    list_display = ("plan", "topic", "partition", "replicas_before", "replicas_after", "state")
    list_filter = ("state",)


@admin.register(Execution)
class ExecutionAdmin(_ViewOnly):
    list_display = ("plan", "batches", "bytes_done", "bytes_total", "cancel_requested", "runs")
