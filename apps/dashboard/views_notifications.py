"""The notifications page (admin role): channels by host only, the recent delivery log,
and the "Send test" button. Channels are created and edited in the admin."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.audit.services import client_address_get
from apps.notifications.selectors import channel_get, channel_rows_list, deliveries_recent
from apps.notifications.services.channels import notification_channel_test

DELIVERIES_SHOWN = 50


@require_GET
@login_required
@permission_required("notifications.view_notificationchannel", raise_exception=True)
def notifications_page(request: HttpRequest) -> HttpResponse:
    context = {
        "channels": channel_rows_list(),
        "deliveries": deliveries_recent(limit=DELIVERIES_SHOWN),
    }
    return render(request, "dashboard/notifications.html", context)


@require_POST
@login_required
@permission_required("notifications.test_notificationchannel", raise_exception=True)
def notification_test(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = channel_get(channel_id=channel_id)
    if channel is None:
        raise Http404("no such channel")
    result = notification_channel_test(
        channel=channel, actor=request.user, client_address=client_address_get(request=request)
    )
    if result.ok:
        messages.success(request, f"{channel}: test delivered (HTTP {result.status_code}).")
    else:
        messages.error(request, f"{channel}: test not delivered: {result.error}")
    return redirect("dashboard:notifications")
