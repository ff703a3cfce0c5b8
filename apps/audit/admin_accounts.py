"""Users and groups in the admin: every creation, change, deletion and password change
is audited with who made it and the state before and after (names, flags, groups,
permissions; never a password or its hash)."""

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User
from django.db import models
from django.http import HttpRequest, HttpResponse

from .actions import ACCOUNT_ACTIONS, AccountAction
from .services import audit_record, client_address_get


def _perms(permissions) -> list[str]:
    return sorted(f"{p.content_type.app_label}.{p.codename}" for p in permissions)


def user_state(user: User) -> dict[str, Any]:
    return {
        "username": user.username,
        "email": user.email,
        "is_active": user.is_active,
        "is_staff": user.is_staff,
        "is_superuser": user.is_superuser,
        "groups": sorted(user.groups.values_list("name", flat=True)),
        "user_permissions": _perms(user.user_permissions.select_related("content_type")),
    }


def group_state(group: Group) -> dict[str, Any]:
    return {
        "name": group.name,
        "permissions": _perms(group.permissions.select_related("content_type")),
    }


class _AuditedAdmin(admin.ModelAdmin):
    """Records `<kind>.created|changed|deleted`; groups and permissions are saved in
    save_related, so the change is recorded after it."""

    kind = ""

    def state_of(self, obj: models.Model) -> dict[str, Any]:
        raise NotImplementedError

    def save_model(self, request: HttpRequest, obj, form, change: bool) -> None:
        if change:
            request._audit_before = self.state_of(type(obj).objects.get(pk=obj.pk))
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        before = getattr(request, "_audit_before", None) if change else None
        after = self.state_of(form.instance)
        if change and before == after:
            return
        audit_record(
            actor=request.user,
            action=ACCOUNT_ACTIONS[(self.kind, "changed" if change else "created")],
            obj=form.instance,
            before=before,
            after=after,
            client_address=client_address_get(request=request),
        )

    def delete_model(self, request: HttpRequest, obj) -> None:
        before, pk, label = self.state_of(obj), str(obj.pk), obj._meta.label_lower
        super().delete_model(request, obj)
        audit_record(
            actor=request.user,
            action=ACCOUNT_ACTIONS[(self.kind, "deleted")],
            object_type=label,
            object_id=pk,
            object_repr=str(obj),
            before=before,
            client_address=client_address_get(request=request),
        )

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        for obj in queryset:
            self.delete_model(request, obj)


admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class AuditedUserAdmin(_AuditedAdmin, UserAdmin):
    kind = "user"

    def state_of(self, obj: models.Model) -> dict[str, Any]:
        return user_state(obj)

    def user_change_password(
        self, request: HttpRequest, id: str, form_url: str = ""
    ) -> HttpResponse:
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302:
            user = User.objects.get(pk=id)
            audit_record(
                actor=request.user,
                action=AccountAction.USER_PASSWORD_CHANGED,
                obj=user,
                client_address=client_address_get(request=request),
            )
        return response


@admin.register(Group)
class AuditedGroupAdmin(_AuditedAdmin, GroupAdmin):
    kind = "group"

    def state_of(self, obj: models.Model) -> dict[str, Any]:
        return group_state(obj)
