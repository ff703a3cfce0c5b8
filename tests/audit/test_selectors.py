"""Exploring the trail by cluster: events about the cluster and everything of it."""

import pytest

from apps.audit.selectors import audit_events_explore
from apps.audit.services import audit_record
from apps.plans.selectors import cluster_audited_objects
from tests.support.factories import cluster_make, plan_make

pytestmark = pytest.mark.django_db


def of(cluster):
    return cluster_audited_objects(cluster=cluster)


def test_it_finds_audit_events_by_cluster(cluster, viewer):
    other = cluster_make(name="other")
    ours, theirs = plan_make(cluster), plan_make(other)
    audit_record(actor=viewer, action="cluster.viewed", obj=cluster)
    actions = {(e.action, e.object_id) for e in audit_events_explore(about=of(cluster))}
    assert ("plan.proposed", str(ours.pk)) in actions
    assert ("cluster.viewed", str(cluster.pk)) in actions
    assert ("plan.proposed", str(theirs.pk)) not in actions
    assert list(audit_events_explore(about=of(cluster), actor="vic")) != []
    assert list(audit_events_explore(about=of(other), actor="vic")) == []


def test_it_explores_the_whole_trail_without_objects_and_nothing_with_none(cluster, viewer):
    audit_record(actor=viewer, action="cluster.viewed", obj=cluster)
    assert audit_events_explore(actor="vic").count() == 1
    assert audit_events_explore(about=[], actor="vic").count() == 0
