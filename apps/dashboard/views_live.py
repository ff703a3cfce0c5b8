"""The cluster page's live regions, rendered once per cluster state and shared.

After a push, every open cluster page fetches its regions here, naming the stamp the
push carried. The first request renders them and keeps them in the cache under that
stamp (metrics.selectors.stamped_answer_get); every other page with the same view is
answered from the cache. What a viewer may see is part of the key: the plans table
only for `plans.view_plan`, the topic search and page it shows, and the state of the
cluster's plans, so no answer built for one viewer reaches another who may not see it.
"""

from django.http import Http404, HttpRequest, JsonResponse
from django.template.loader import render_to_string
from django.utils import timezone
from django.views.decorators.http import require_GET

from apps.clusters.selectors import (
    VIEW_CLUSTER_PERMISSION,
    broker_rows_list,
    cluster_rounds_list,
    cluster_visible_get,
    topic_rows_page,
)
from apps.metrics.selectors import stamped_answer_get
from apps.plans.selectors import cluster_health_get, cluster_plans_stamp, plans_board_get

from .grants_required import grant_required

# Each live region of cluster.html (by element id) and its template.
REGIONS = {
    "cluster-summary": "dashboard/_cluster_summary.html",
    "brokers-live": "dashboard/_cluster_brokers.html",
    "plans-live": "dashboard/_cluster_plans.html",
    "topics-live": "dashboard/_cluster_topics.html",
}


@require_GET
@grant_required(VIEW_CLUSTER_PERMISSION)
def cluster_live_regions(request: HttpRequest, name: str) -> JsonResponse:
    """{"stamp": {"model", "window"}, "regions": {id: html}} for `?stamp=<model>|<window>`
    (empty: the current state) and the page's own `topic` / `topics_page`."""
    cluster = cluster_visible_get(user=request.user, name=name)
    if cluster is None:
        raise Http404("no such cluster")
    topic = request.GET.get("topic", "")[:249]  # as the topics region links it
    search = topic.strip()
    page = request.GET.get("topics_page", "")[:12]
    sees_plans = request.user.has_perm("plans.view_plan", cluster)

    def build() -> dict[str, str]:
        context = {
            "cluster": cluster,
            "health": cluster_health_get(cluster=cluster),
            "brokers": broker_rows_list(cluster=cluster),
            "topics": topic_rows_page(cluster=cluster, search=search, page=page or None),
            "board": plans_board_get(cluster=cluster) if sees_plans else None,
            "now": timezone.now(),
            "rounds": cluster_rounds_list(cluster=cluster),
        }
        # The regions read `request.GET.topic` as the page does; nothing user-specific.
        return {
            region: render_to_string(template, context, request=request)
            for region, template in REGIONS.items()
        }

    stamp, regions = stamped_answer_get(
        cluster_id=cluster.pk,
        token=request.GET.get("stamp", "")[:200],
        name=repr(("regions", sees_plans, topic, page, cluster_plans_stamp(cluster=cluster))),
        build=build,
    )
    return JsonResponse({"stamp": stamp, "regions": regions})
