"""Upgrade to per-cluster roles without losing any access: each role group (viewer,
operator, approver, admin) gets a grant of its role on all clusters, so its members keep
what they had. And the audit events written before events named their cluster get it,
so per-cluster readers see their clusters' history.

The groups' own permissions stay (the release before this one reads them while the
upgrade runs); this release ignores them (apps/access/backends.py).
"""

from django.db import migrations

ROLES = ("viewer", "operator", "approver", "admin")
# Audited object types that name their cluster in a `cluster` column.
WITH_CLUSTER = {
    "plans.plan": ("plans", "Plan"),
    "plans.clusterpolicy": ("plans", "ClusterPolicy"),
    "clusters.broker": ("clusters", "Broker"),
    "notifications.notificationchannel": ("notifications", "NotificationChannel"),
}
# ... and those that name it through their plan.
WITH_PLAN = {"plans.execution": ("plans", "Execution")}


def grants_from_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Grant = apps.get_model("access", "Grant")
    for group in Group.objects.filter(name__in=ROLES):
        Grant.objects.get_or_create(role=group.name, group=group, cluster=None, source="manual")


def _ids(rows, column):
    return {str(pk): cid for pk, cid in rows.values_list("pk", column)}


def events_clusters_fill(apps, schema_editor):
    AuditEvent = apps.get_model("audit", "AuditEvent")
    events = AuditEvent.objects.filter(cluster_id__isnull=True)
    Cluster = apps.get_model("clusters", "Cluster")
    known = {str(pk) for pk in Cluster.objects.values_list("pk", flat=True)}
    for object_id in known:
        events.filter(object_type="clusters.cluster", object_id=object_id).update(
            cluster_id=int(object_id)
        )
    lookups = {
        label: _ids(apps.get_model(app, model).objects.all(), "cluster_id")
        for label, (app, model) in WITH_CLUSTER.items()
    }
    lookups |= {
        label: _ids(apps.get_model(app, model).objects.all(), "plan__cluster_id")
        for label, (app, model) in WITH_PLAN.items()
    }
    for label, clusters in lookups.items():
        by_cluster: dict[int, list[str]] = {}
        for object_id, cluster_id in clusters.items():
            by_cluster.setdefault(cluster_id, []).append(object_id)
        for cluster_id, object_ids in by_cluster.items():
            for start in range(0, len(object_ids), 500):
                events.filter(
                    object_type=label, object_id__in=object_ids[start : start + 500]
                ).update(cluster_id=cluster_id)


class Migration(migrations.Migration):
    dependencies = [
        ("access", "0001_initial"),
        ("audit", "0002_event_cluster"),
        ("plans", "0011_plan_estimate_note"),
        ("notifications", "0003_delivery_events_execution_paused_resumed_tuned"),
    ]

    operations = [
        migrations.RunPython(grants_from_groups, migrations.RunPython.noop),
        migrations.RunPython(events_clusters_fill, migrations.RunPython.noop),
    ]
