"""The admin role adds, changes and removes clusters (in the dashboard)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

PERMISSIONS = [
    ("clusters", "add_cluster"),
    ("clusters", "change_cluster"),
    ("clusters", "delete_cluster"),
]


def grant(apps, schema_editor):
    app_config = apps.get_app_config("clusters")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="admin")
    for app_label, codename in PERMISSIONS:
        group.permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group in Group.objects.filter(name="admin"):
        for app_label, codename in PERMISSIONS:
            group.permissions.remove(
                *Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )


class Migration(migrations.Migration):
    dependencies = [("plans", "0003_move_progress_and_dead_targets"), ("clusters", "0001_initial")]

    operations = [migrations.RunPython(grant, revoke)]
