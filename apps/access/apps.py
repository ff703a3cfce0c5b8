from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "apps.access"
    label = "access"
    verbose_name = "Access: per-cluster roles"
