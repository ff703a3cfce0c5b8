"""The cluster page's and the API's per-broker disks (JBOD): path, used / total,
usable, offline, the same figures from one selector (clusters.selectors.log_dir_rows)."""

import pytest
from rest_framework.test import APIClient

from apps.clusters.models import Broker
from apps.clusters.selectors import broker_rows_list

pytestmark = pytest.mark.django_db

GB = 10**9
DIRS = [
    {"path": "/d/a", "total": 500 * GB, "usable": 120 * GB, "online": True, "used": 250 * GB},
    {"path": "/d/b", "total": None, "usable": None, "online": False, "used": 0},
]


@pytest.fixture
def disks(cluster):
    Broker.objects.filter(cluster=cluster, node_id=1).update(log_dirs=DIRS)
    return cluster


def test_it_gives_each_brokers_disks_with_their_use(disks):
    rows = {r.broker.node_id: r for r in broker_rows_list(cluster=disks)}

    a, b = rows[1].log_dirs
    assert (a.path, a.used, a.total, a.usable, a.online, a.used_pct) == (
        "/d/a",
        250 * GB,
        500 * GB,
        120 * GB,
        True,
        50.0,
    )
    assert (b.online, b.total, b.used_pct) == (False, None, None)
    assert rows[2].log_dirs is None  # never read


def test_it_shows_each_disk_and_an_offline_one_on_the_cluster_page(client, disks, viewer):
    client.force_login(viewer)

    body = client.get("/clusters/prod/").content.decode()

    shown = (
        '<div data-log-dir="/d/a">/d/a: 232.8\xa0GiB / 465.7\xa0GiB (50.0%), 111.8\xa0GiB usable'
    )
    assert shown in body
    assert '<div data-log-dir="/d/b" class="bad">/d/b: 0\xa0B / ? — offline</div>' in body


def test_it_lists_the_same_figures_in_the_api(disks, viewer):
    api = APIClient()
    api.force_login(viewer)

    brokers = {b["broker"]["node_id"]: b for b in api.get("/api/clusters/prod/brokers/").json()}

    assert brokers[1]["log_dirs"] == [
        {**DIRS[0], "used_pct": 50.0},
        {**DIRS[1], "used_pct": None},
    ]
    assert brokers[2]["log_dirs"] is None
