"""Request bodies are bounded: JSON nested deeper than JSON_DEPTH_MAX or a body over
API_MAX_BODY_BYTES is a 400 with a JSON error, also to an anonymous caller of the token
endpoint (unbounded, 3,000 levels exhaust the parser's recursion: a 500)."""

import pytest
from rest_framework.test import APIClient

from apps.core.bounds import JSON_DEPTH_MAX

pytestmark = pytest.mark.django_db

TOKEN = "/api/auth/token/"


def nested(depth: int) -> str:
    return '{"username": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [3000, JSON_DEPTH_MAX + 1])
def test_it_refuses_deep_json_to_an_anonymous_caller(depth):
    response = APIClient().post(TOKEN, nested(depth), content_type="application/json")

    assert response.status_code == 400
    assert "nested deeper" in response.json()["detail"]


def test_it_still_reads_json_at_the_depth_limit():
    response = APIClient().post(TOKEN, nested(JSON_DEPTH_MAX - 1), content_type="application/json")
    # Parsed: refused as bad credentials, not as a bad body.
    assert response.status_code == 400 and "detail" not in response.json()


@pytest.mark.parametrize("body_format", ["json", "multipart", "form"])
def test_it_refuses_a_body_over_the_size_limit(settings, body_format):
    settings.API_MAX_BODY_BYTES = 1000
    fields = {"username": "x" * 2000, "password": "y"}
    client = APIClient()

    if body_format == "form":
        body = "username=" + "x" * 2000 + "&password=y"
        response = client.post(TOKEN, body, content_type="application/x-www-form-urlencoded")
    else:
        response = client.post(TOKEN, fields, format=body_format)

    assert response.status_code == 400
    assert "larger than 1000 bytes" in response.json()["detail"]


def test_it_refuses_nan_in_a_body(cluster, django_user_model):
    from tests.security.input_clients import api_as

    response = api_as("viewer").post(
        "/api/clusters/prod/what-if/",
        '{"traffic_scale": NaN}',
        content_type="application/json",
    )
    assert response.status_code == 400
