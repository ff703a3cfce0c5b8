"""Grants from single sign-on claims (access.services.oidc_grants): the group claim
mapped by OIDC_GROUP_GRANTS replaces the user's "oidc" grants, leaves hand-made ones
alone, and each change is audited once."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured

from apps.access.models import Grant
from apps.access.services import oidc_grants_apply, oidc_group_grants_parse
from apps.audit.models import AuditEvent
from apps.clusters.models import Cluster

pytestmark = pytest.mark.django_db

RULES = "kafka-admins=admin@*, team-a=operator@prod, team-a=viewer@*, team-b=viewer@nowhere"


@pytest.fixture
def sso(settings):
    settings.OIDC_GROUP_GRANTS = RULES
    settings.OIDC_GROUPS_CLAIM = "groups"
    Cluster.objects.create(name="prod", bootstrap_servers="127.0.0.1:1")
    return User.objects.create_user("alice")


def held(user) -> set[tuple[str, str, str]]:
    return {
        (g.role, g.cluster.name if g.cluster_id else "*", g.source)
        for g in Grant.objects.filter(user=user).select_related("cluster")
    }


def test_it_grants_what_the_groups_map_to(sso):
    oidc_grants_apply(user=sso, claims={"groups": ["team-a", "kafka-admins", "other"]})

    assert held(sso) == {
        ("admin", "*", "oidc"),
        ("operator", "prod", "oidc"),
        ("viewer", "*", "oidc"),
    }
    assert sso.has_perm("access.add_grant")


def test_it_replaces_oidc_grants_and_keeps_manual_ones(sso):
    Grant.objects.create(user=sso, role="approver", source="manual")
    oidc_grants_apply(user=sso, claims={"groups": ["team-a", "kafka-admins"]})

    oidc_grants_apply(user=sso, claims={"groups": ["team-a"]})
    oidc_grants_apply(user=sso, claims={"groups": ["team-a"]})  # unchanged: not audited

    assert held(sso) == {
        ("approver", "*", "manual"),
        ("operator", "prod", "oidc"),
        ("viewer", "*", "oidc"),
    }
    events = AuditEvent.objects.filter(action="grant.oidc_applied").order_by("pk")
    assert [e.after for e in events] == [
        ["admin@*", "operator@prod", "viewer@*"],
        ["operator@prod", "viewer@*"],
    ]


def test_it_grants_nothing_for_a_cluster_that_does_not_exist_or_no_claim(sso):
    oidc_grants_apply(user=sso, claims={"groups": ["team-b"]})
    oidc_grants_apply(user=sso, claims={"groups": "not-a-list-of-known-groups"})
    oidc_grants_apply(user=sso, claims={})

    assert held(sso) == set()


@pytest.mark.parametrize("text", ["team-a=operator", "team-a=root@*", "=viewer@*", "team-a"])
def test_it_refuses_a_malformed_mapping(text):
    with pytest.raises(ImproperlyConfigured, match="OIDC_GROUP_GRANTS"):
        oidc_group_grants_parse(text=text)


def test_it_stops_the_start_on_a_malformed_mapping_or_missing_endpoints(settings):
    from apps.access.checks import oidc_settings_check

    settings.OIDC_GROUP_GRANTS = "team-a=root@*"
    settings.OIDC_RP_CLIENT_ID = "kafka-balancer"
    settings.OIDC_OP_TOKEN_ENDPOINT = ""

    assert [e.id for e in oidc_settings_check(None)] == ["access.E001", "access.E002"]
