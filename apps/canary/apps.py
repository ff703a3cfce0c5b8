from django.apps import AppConfig


class CanaryConfig(AppConfig):
    name = "apps.canary"
    label = "canary"
    verbose_name = "Client canary"
