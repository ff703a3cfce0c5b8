"""Browsable API docs: Swagger UI and Redoc from the installed sidecar package (no CDN),
linked in the nav, for signed-in users only."""

import pytest
from devkit.users import user_make
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", ["/api/docs/", "/api/redoc/"])
def test_it_serves_the_api_docs_from_the_package(client, url):
    assert client.get(url).status_code in (302, 401, 403)  # signed out: no docs
    client.force_login(user_make("vic", "viewer"))
    response = client.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert "/static/drf_spectacular_sidecar/" in body and "/api/schema/" in body
    assert "cdn." not in body and "unpkg" not in body


def test_its_scripts_are_in_the_static_files():
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert finders.find("drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js")


def test_the_nav_links_the_docs(client):
    client.force_login(user_make("vic", "viewer"))
    assert 'href="/api/docs/">API docs</a>' in client.get("/").content.decode()
