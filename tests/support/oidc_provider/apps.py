from django.apps import AppConfig


class TestProviderConfig(AppConfig):
    # "oidc_provider" is the library's label.
    name = "tests.support.oidc_provider"
    label = "test_oidc_provider"
