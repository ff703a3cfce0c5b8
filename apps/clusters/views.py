from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from .models import Cluster
from .selectors import broker_rows_list, cluster_summaries_list, topic_rows_list


@login_required
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "clusters/index.html", {"summaries": cluster_summaries_list()})


@login_required
def detail(request: HttpRequest, name: str) -> HttpResponse:
    cluster = get_object_or_404(Cluster, name=name)
    context = {
        "cluster": cluster,
        "brokers": broker_rows_list(cluster=cluster),
        "topics": topic_rows_list(cluster=cluster),
    }
    return render(request, "clusters/detail.html", context)
