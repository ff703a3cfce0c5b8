from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "apps.clusters"
    label = "clusters"
    verbose_name = "Kafka clusters"
