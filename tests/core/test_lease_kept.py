"""A round's lease is renewed while the round runs, and lets go when it ends or dies."""

from datetime import timedelta

import pytest
from devkit.polling import wait_until
from django.utils import timezone

from apps.clusters.models import ClusterRound
from apps.core.leases import lease_kept, lease_release, lease_take
from tests.support.factories import cluster_make

FIELDS = {"owner_field": "lease_token", "until_field": "lease_until"}


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_it_renews_a_held_lease_while_the_work_runs_and_never_takes_a_free_one():
    cluster = cluster_make()
    row = ClusterRound.objects.create(cluster=cluster, kind="sync")
    held = ClusterRound.objects.filter(pk=row.pk)
    assert lease_take(row=held, owner="me", seconds=0.6, **FIELDS)
    first = held.get().lease_until
    with lease_kept(row=held, owner="me", seconds=0.6, **FIELDS):
        wait_until(lambda: held.get().lease_until > first, 10, 0.05, what="a renewal")
        # Another taker finds it held throughout.
        assert not lease_take(row=held, owner="other", seconds=0.6, **FIELDS)
    lease_release(row=held, owner="me", **FIELDS)
    assert held.get().lease_until is None
    # A renewal after the release extends nothing: the lease stays free.
    with lease_kept(row=held, owner="me", seconds=0.3, **FIELDS):
        wait_until(lambda: timezone.now() > first + timedelta(seconds=1), 10, 0.05, what="renewals")
    assert held.get().lease_until is None and held.get().lease_token == ""
