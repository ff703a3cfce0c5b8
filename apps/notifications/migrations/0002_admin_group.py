"""The admin role manages notification channels, reads their delivery log and sends
test notifications. Other roles see neither (channel URLs are credentials).

Permissions are created here first, as in plans.0002_groups, so the group can
reference them on a fresh database.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

PERMISSIONS = [
    "view_notificationchannel",
    "add_notificationchannel",
    "change_notificationchannel",
    "delete_notificationchannel",
    "test_notificationchannel",
    "view_delivery",
    "view_deliveryattempt",
]


def _permissions(apps):
    app_config = apps.get_app_config("notifications")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    Permission = apps.get_model("auth", "Permission")
    return Permission.objects.filter(
        content_type__app_label="notifications", codename__in=PERMISSIONS
    )


def admin_group_grant(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    group, _ = Group.objects.get_or_create(name="admin")
    group.permissions.add(*_permissions(apps))


def admin_group_revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    group = Group.objects.filter(name="admin").first()
    if group is not None:
        group.permissions.remove(*_permissions(apps))


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_initial"),
        ("plans", "0002_groups"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(admin_group_grant, admin_group_revoke)]
