from django.contrib import admin
from django.http import HttpRequest

from . import admin_accounts  # noqa: F401 - users and groups, audited
from .models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    """Read-only: no add, change or delete, not even for superusers."""

    list_display = ("created_at", "actor", "action", "object_repr", "reason", "client_address")
    list_filter = ("action", "actor_kind", "object_type")
    search_fields = ("actor", "action", "object_repr", "object_id", "reason")
    date_hierarchy = "created_at"
    actions = None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
