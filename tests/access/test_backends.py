"""The grant backend: which grants answer which question."""

import pytest
from django.contrib.auth.models import Group, User

from apps.access.models import Grant
from apps.access.roles import Role
from apps.access.selectors import cluster_ids_with_perm
from tests.support.factories import cluster_make

pytestmark = pytest.mark.django_db


def test_it_answers_per_cluster_for_a_grant_on_one_cluster():
    prod, other = cluster_make("prod"), cluster_make("other")
    olga = User.objects.create_user("olga")
    Grant.objects.create(role=Role.OPERATOR, user=olga, cluster=prod)
    assert olga.has_perm("plans.request_plan", prod)
    assert not olga.has_perm("plans.request_plan", other)
    assert not olga.has_perm("plans.approve_plan", prod)
    # Without an object, and for an object of no cluster: only grants on all count.
    assert not olga.has_perm("plans.request_plan")
    assert not olga.has_perm("plans.request_plan", olga)
    assert cluster_ids_with_perm(user=olga, perm="plans.request_plan") == {prod.pk}


def test_it_gives_a_group_grant_on_all_clusters_to_every_member_everywhere():
    prod = cluster_make("prod")
    team = Group.objects.create(name="team")
    Grant.objects.create(role=Role.APPROVER, group=team, cluster=None)
    anna = User.objects.create_user("anna")
    anna.groups.add(team)
    assert anna.has_perm("plans.approve_plan") and anna.has_perm("plans.approve_plan", prod)
    assert cluster_ids_with_perm(user=anna, perm="plans.approve_plan") is None
    assert not anna.has_perm("plans.change_clusterpolicy", prod)


def test_it_gives_nothing_to_an_inactive_user():
    prod = cluster_make("prod")
    gone = User.objects.create_user("gone", is_active=False)
    Grant.objects.create(role=Role.ADMIN, user=gone, cluster=None)
    assert not gone.has_perm("clusters.view_cluster", prod)
    assert cluster_ids_with_perm(user=gone, perm="clusters.view_cluster") == set()
