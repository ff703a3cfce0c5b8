"""API tokens in the admin: listed by user, revoked there (audited like the API's).
They are issued only through the API, where the key is shown once: the admin holds
nothing but a digest."""

from django.contrib import admin
from django.http import HttpRequest

from apps.audit.services import client_address_get

from .models import ApiToken
from .services import token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("user", "created_at")
    fields = ("user", "created_at")
    readonly_fields = fields
    search_fields = ("user__username",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: ApiToken) -> None:
        token_revoke(
            user=obj.user, actor=request.user, client_address=client_address_get(request=request)
        )

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        for token in queryset.select_related("user"):
            self.delete_model(request, token)
