"""The access page (admin role): who holds which role on which cluster, a form to grant
one, and a button to revoke each. Every change goes through apps.access.services."""

from django.contrib import messages
from django.contrib.auth.models import Group
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from apps.access.errors import GrantError
from apps.access.roles import Role
from apps.access.selectors import grants_list
from apps.access.services import grant_create, grant_revoke
from apps.audit.services import client_address_get
from apps.clusters.selectors import cluster_ids_with, clusters_with

from .grants_required import grant_required

MANAGE = "access.add_grant"
EVERY_CLUSTER = "*"


@require_http_methods(["GET", "POST"])
@grant_required(MANAGE)
def access_page(request: HttpRequest) -> HttpResponse:
    clusters = clusters_with(user=request.user, perm=MANAGE)
    on_all = cluster_ids_with(user=request.user, perm=MANAGE) is None
    if request.method == "POST":
        where = request.POST.get("cluster", "")
        cluster = None if where == EVERY_CLUSTER else clusters.filter(name=where).first()
        try:
            if cluster is None and where != EVERY_CLUSTER:
                raise GrantError("choose a cluster you administer")
            grant = grant_create(
                actor=request.user,
                role=request.POST.get("role", ""),
                cluster=cluster,
                username=request.POST.get("username", "").strip(),
                group_name=request.POST.get("group", "").strip(),
                client_address=client_address_get(request=request),
            )
        except GrantError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Granted: {grant}.")
        return redirect("dashboard:access")
    context = {
        "grants": grants_list(cluster_ids=cluster_ids_with(user=request.user, perm=MANAGE)),
        "clusters": clusters,
        "on_all": on_all,
        "roles": list(Role),
        "groups": Group.objects.order_by("name").values_list("name", flat=True),
    }
    return render(request, "dashboard/access.html", context)


@require_POST
@grant_required(MANAGE)
def access_revoke(request: HttpRequest, grant_id: int) -> HttpResponse:
    try:
        grant_revoke(
            actor=request.user,
            grant_id=grant_id,
            client_address=client_address_get(request=request),
        )
    except GrantError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Grant revoked.")
    return redirect("dashboard:access")
