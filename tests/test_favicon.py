"""The favicon: linked from every page and answered at /favicon.ico, never a 404."""

import pytest
from django.contrib.staticfiles import finders


def test_it_answers_favicon_ico_with_the_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/favicon.svg"
    assert finders.find("favicon.svg")


@pytest.mark.django_db
def test_pages_link_the_icon(client):
    body = client.get("/accounts/login/").content.decode()
    assert 'rel="icon" href="/static/favicon.svg"' in body
