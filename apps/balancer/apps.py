from django.apps import AppConfig


class BalancerConfig(AppConfig):
    name = "apps.balancer"
    label = "balancer"
    verbose_name = "Balancer"
