"""The notifications page (admin role): channels by host only, the recent delivery log,
and the "Send test" button. Channels are created and edited in the admin."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.audit.services import client_address_get
from apps.clusters.selectors import cluster_ids_with
from apps.notifications.selectors import channel_get, channel_rows_list, deliveries_recent
from apps.notifications.services.channels import notification_channel_test

from .grants_required import grant_required

DELIVERIES_SHOWN = 50
VIEW_CHANNELS = "notifications.view_notificationchannel"
TEST_CHANNELS = "notifications.test_notificationchannel"


@require_GET
@grant_required(VIEW_CHANNELS)
def notifications_page(request: HttpRequest) -> HttpResponse:
    visible = cluster_ids_with(user=request.user, perm=VIEW_CHANNELS)
    context = {
        "channels": channel_rows_list(cluster_ids=visible),
        "deliveries": deliveries_recent(cluster_ids=visible, limit=DELIVERIES_SHOWN),
    }
    return render(request, "dashboard/notifications.html", context)


@require_POST
@grant_required(TEST_CHANNELS)
def notification_test(request: HttpRequest, channel_id: int) -> HttpResponse:
    channel = channel_get(channel_id=channel_id)
    if channel is None or not request.user.has_perm(VIEW_CHANNELS, channel):
        raise Http404("no such channel")
    if not request.user.has_perm(TEST_CHANNELS, channel):
        raise PermissionDenied
    result = notification_channel_test(
        channel=channel, actor=request.user, client_address=client_address_get(request=request)
    )
    if result.ok:
        messages.success(request, f"{channel}: test delivered (HTTP {result.status_code}).")
    else:
        messages.error(request, f"{channel}: test not delivered: {result.error}")
    return redirect("dashboard:notifications")
