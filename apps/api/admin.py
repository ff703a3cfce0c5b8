"""API tokens in the admin: creating or deleting one there is audited like the API's."""

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from apps.audit.actions import AuthAction
from apps.audit.services import audit_record, client_address_get

from .services import token_revoke

admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class AuditedTokenAdmin(TokenAdmin):
    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            audit_record(
                actor=request.user,
                action=AuthAction.TOKEN_CREATED,
                obj=obj.user,
                client_address=client_address_get(request=request),
            )

    def delete_model(self, request, obj) -> None:
        token_revoke(
            user=obj.user, actor=request.user, client_address=client_address_get(request=request)
        )

    def delete_queryset(self, request, queryset) -> None:
        for token in queryset.select_related("user"):
            self.delete_model(request, token)
