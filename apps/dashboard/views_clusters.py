"""Managing clusters (admin role): add, edit with Test connection, remove after a
confirmation, and the cluster's balancing policy as a form. Thin: a form, one service."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from apps.audit.services import client_address_get
from apps.clusters.editing import ClusterRemovalRefused, cluster_delete, cluster_save
from apps.clusters.forms import ClusterForm
from apps.clusters.models import Cluster
from apps.clusters.selectors import cluster_visible_get
from apps.kafka_layer.connection_check import connection_check
from apps.plans.errors import PlanServiceError
from apps.plans.forms import PolicyForm
from apps.plans.services import policy_get, policy_update

from .entered_secrets import entered_secrets_drop, entered_secrets_get, entered_secrets_put
from .grants_required import grant_required


def _cluster_or_404(request: HttpRequest, name: str, perm: str) -> Cluster:
    """The named cluster when the user sees it (else 404) and holds `perm` there (else 403)."""
    cluster = cluster_visible_get(user=request.user, name=name)
    if cluster is None:
        raise Http404("no such cluster")
    if not request.user.has_perm(perm, cluster):
        raise PermissionDenied
    return cluster


def _cluster_form_page(request: HttpRequest, cluster: Cluster | None) -> HttpResponse:
    """GET shows the form. POST `test` tries the settings and stores nothing; `save`
    tries them and stores them only when the connection works; `save-anyway` stores
    them untried (a cluster not reachable from here yet). Secrets typed and not stored
    yet are kept for the next submit in the session; the page gets a reference only."""
    entered = entered_secrets_get(request=request) if request.method == "POST" else {}
    form = ClusterForm(request.POST or None, instance=cluster, entered_secrets=entered)
    action = request.POST.get("action", "save")
    check = None
    if request.method == "POST" and form.is_valid():
        if action in ("test", "save"):
            # The instance holds the form's settings, with a kept secret still encrypted.
            check = connection_check(connection=form.instance.connection)
        if action == "save-anyway" or (action == "save" and check.ok):
            try:
                saved = cluster_save(
                    actor=request.user,
                    cluster=form.instance,
                    secrets_changed=form.secrets_changed,
                    client_address=client_address_get(request=request),
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                entered_secrets_drop(request=request)
                messages.success(request, f"Cluster {saved.name} saved.")
                return redirect("dashboard:cluster", name=saved.name)
    reference = ""
    if request.method == "POST":
        reference = entered_secrets_put(request=request, values=form.secrets_entered)
    context = {
        "form": form,
        "cluster": cluster,
        "check": check,
        "not_saved": action == "save",
        "entered_secrets": reference,
    }
    return render(request, "dashboard/cluster_form.html", context)


@require_http_methods(["GET", "POST"])
@grant_required("clusters.add_cluster")
def cluster_add(request: HttpRequest) -> HttpResponse:
    # A new cluster is on no one's list yet: adding one takes admin on every cluster.
    if not request.user.has_perm("clusters.add_cluster"):
        raise PermissionDenied
    return _cluster_form_page(request, None)


@require_http_methods(["GET", "POST"])
@grant_required("clusters.change_cluster")
def cluster_edit(request: HttpRequest, name: str) -> HttpResponse:
    return _cluster_form_page(request, _cluster_or_404(request, name, "clusters.change_cluster"))


@require_http_methods(["GET", "POST"])
@grant_required("clusters.delete_cluster")
def cluster_remove(request: HttpRequest, name: str) -> HttpResponse:
    cluster = _cluster_or_404(request, name, "clusters.delete_cluster")
    refused = ""
    if request.method == "POST" and request.POST.get("confirm") == cluster.name:
        try:
            cluster_delete(
                actor=request.user,
                cluster=cluster,
                client_address=client_address_get(request=request),
            )
        except ClusterRemovalRefused as exc:
            refused = str(exc)
        else:
            messages.success(request, f"Cluster {cluster.name} removed; its audit trail is kept.")
            return redirect("dashboard:clusters")
    context = {
        "cluster": cluster,
        "mismatch": request.method == "POST" and not refused,
        "refused": refused,
    }
    return render(request, "dashboard/cluster_remove.html", context)


@require_http_methods(["GET", "POST"])
@grant_required("plans.change_clusterpolicy")
def cluster_policy(request: HttpRequest, name: str) -> HttpResponse:
    cluster = _cluster_or_404(request, name, "plans.change_clusterpolicy")
    policy = policy_get(cluster=cluster)
    form = PolicyForm(request.POST or None, instance=policy)
    if request.method == "POST" and form.is_valid():
        try:
            policy_update(
                policy=policy_get(cluster=cluster),
                actor=request.user,
                changes=form.changes(),
                client_address=client_address_get(request=request),
            )
        except PlanServiceError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Policy saved.")
            return redirect("dashboard:cluster", name=cluster.name)
    return render(request, "dashboard/cluster_policy.html", {"cluster": cluster, "form": form})
