"""Admin: channels are managed here through the services (audited); the URL and secret
are write-only (left empty on change: kept). Deliveries and their log are view-only."""

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest

from apps.audit.services import client_address_get

from .errors import NotificationChannelInvalid
from .models import SUBSCRIBABLE_EVENTS, Delivery, DeliveryAttempt, NotificationChannel
from .services.channels import (
    notification_channel_create,
    notification_channel_delete,
    notification_channel_test,
    notification_channel_update,
    notification_channel_validate,
)

_WRITE_ONLY = forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"})


class NotificationChannelForm(forms.ModelForm):
    url = forms.CharField(
        required=False,
        widget=_WRITE_ONLY,
        help_text="Stored encrypted and never shown again. On change, leave empty to keep it.",
    )
    secret = forms.CharField(
        required=False,
        widget=_WRITE_ONLY,
        help_text="JSON webhooks only: the HMAC-SHA256 key (e.g. `openssl rand -hex 32`). "
        "On change, leave empty to keep it.",
    )
    events = forms.MultipleChoiceField(
        required=False,
        choices=[(e.value, e.label) for e in SUBSCRIBABLE_EVENTS],
        widget=forms.CheckboxSelectMultiple,
        help_text="Used when 'all events' is off.",
    )

    class Meta:
        model = NotificationChannel
        fields = ("cluster", "name", "kind", "url", "secret", "all_events", "events", "enabled")

    def clean(self):
        data = super().clean()
        stored = self.instance if self.instance.pk else None
        values = {
            "name": data.get("name") or "",
            "kind": data.get("kind") or (stored.kind if stored else ""),
            "url": data.get("url") or (stored.url if stored else ""),
            "secret": data.get("secret") or (stored.secret if stored else ""),
            "all_events": bool(data.get("all_events")),
            "events": data.get("events") or [],
            "enabled": bool(data.get("enabled")),
        }
        try:
            notification_channel_validate(values=values)
        except NotificationChannelInvalid as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    form = NotificationChannelForm
    list_display = ("name", "cluster", "kind", "url_host", "all_events", "enabled")
    list_filter = ("cluster", "kind", "enabled")
    actions = ["send_test"]

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # A channel's kind and cluster are fixed: the secret's meaning depends on them.
        return ("cluster", "kind") if obj else ()

    def save_model(self, request: HttpRequest, obj, form, change: bool) -> None:
        data, address = form.cleaned_data, client_address_get(request=request)
        events = list(data.get("events") or [])
        if change:
            stored = NotificationChannel.objects.get(pk=obj.pk)
            changes = {
                "name": data["name"],
                "url": data.get("url") or "",
                "secret": data.get("secret") or "",
                "all_events": data["all_events"],
                "events": events,
                "enabled": data["enabled"],
            }
            notification_channel_update(
                channel=stored, actor=request.user, changes=changes, client_address=address
            )
            obj.pk = stored.pk
            return
        created = notification_channel_create(
            cluster=data["cluster"],
            name=data["name"],
            kind=data["kind"],
            url=data["url"],
            secret=data.get("secret") or "",
            events=None if data["all_events"] else events,
            enabled=data["enabled"],
            actor=request.user,
            client_address=address,
        )
        obj.pk = created.pk

    def delete_model(self, request: HttpRequest, obj) -> None:
        notification_channel_delete(
            channel=obj, actor=request.user, client_address=client_address_get(request=request)
        )

    def delete_queryset(self, request: HttpRequest, queryset) -> None:
        for channel in queryset:
            self.delete_model(request, channel)

    @admin.action(description="Send a test notification", permissions=["test"])
    def send_test(self, request: HttpRequest, queryset) -> None:
        for channel in queryset:
            result = notification_channel_test(
                channel=channel,
                actor=request.user,
                client_address=client_address_get(request=request),
            )
            if result.ok:
                self.message_user(request, f"{channel}: delivered (HTTP {result.status_code})")
            else:
                self.message_user(request, f"{channel}: {result.error}", level=messages.ERROR)

    def has_test_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("notifications.test_notificationchannel")


class DeliveryAttemptInline(admin.TabularInline):
    model = DeliveryAttempt
    fields = ("number", "at", "outcome", "status_code", "error", "duration_ms", "next_retry_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "channel", "event", "state", "attempts", "last_status_code")
    list_filter = ("state", "event", "channel__cluster")
    inlines = [DeliveryAttemptInline]
    actions = None

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
