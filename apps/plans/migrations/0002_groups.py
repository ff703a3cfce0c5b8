"""Groups viewer / operator / approver / admin with their permissions.

Permissions are normally created after migrations (post_migrate); they are created
here first so the groups can reference them on a fresh database.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

VIEW = [
    ("plans", "view_plan"),
    ("plans", "view_planmove"),
    ("plans", "view_execution"),
    ("plans", "view_clusterpolicy"),
    ("audit", "view_auditevent"),
    ("clusters", "view_cluster"),
    ("clusters", "view_broker"),
    ("clusters", "view_topic"),
    ("clusters", "view_partition"),
]
GROUPS = {
    "viewer": VIEW,
    "operator": VIEW + [("plans", "request_plan"), ("plans", "cancel_plan")],
    "approver": VIEW
    + [("plans", "approve_plan"), ("plans", "reject_plan"), ("plans", "cancel_plan")],
    "admin": VIEW
    + [
        ("plans", "request_plan"),
        ("plans", "approve_plan"),
        ("plans", "reject_plan"),
        ("plans", "cancel_plan"),
        ("plans", "approve_data_loss"),
        ("plans", "change_clusterpolicy"),
        ("audit", "export_auditevent"),
        ("clusters", "change_broker"),
    ],
}


def groups_create(apps, schema_editor):
    for label in ("plans", "audit", "clusters"):
        app_config = apps.get_app_config(label)
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, perms in GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        for app_label, codename in perms:
            group.permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )


def groups_delete(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("plans", "0001_initial"),
        ("audit", "0001_initial"),
        ("clusters", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(groups_create, groups_delete)]
