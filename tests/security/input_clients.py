"""API clients signed in by role, for the input-bound tests (tests/api's fixtures,
without a conftest other security test files would share)."""

from devkit.users import user_make
from rest_framework.test import APIClient


def api_as(role: str) -> APIClient:
    client = APIClient()
    client.force_login(user_make(f"user-{role}", role))
    return client
