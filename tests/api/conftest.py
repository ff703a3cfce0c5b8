import pytest
from devkit.users import user_make
from rest_framework.test import APIClient

from tests.support.factories import plan_make


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def plan(cluster):
    return plan_make(cluster)


@pytest.fixture
def as_role(api, db):
    """as_role("approver") -> the client, signed in (session) as a new user of that role."""
    made = {}

    def sign_in(role: str | None) -> APIClient:
        name = f"user-{role or 'none'}"
        if name not in made:
            made[name] = user_make(name, *([role] if role else []))
        api.force_authenticate(user=None)
        api.force_login(made[name])
        return api

    return sign_in
