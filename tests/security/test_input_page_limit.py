"""Page sizes are capped and offsets bounded: `?limit=10²⁵` answers one page of at most
PAGE_SIZE_MAX rows, `?offset=10²⁵` a 400 (unbounded, both overflow the query: a 500)."""

import pytest

from apps.api.common.pagination import PAGE_SIZE_MAX
from tests.security.input_clients import api_as

pytestmark = pytest.mark.django_db

HUGE = 10**25


@pytest.mark.parametrize("url", ["/api/audit/", "/api/clusters/prod/partitions/"])
def test_it_caps_a_huge_limit(cluster, url):
    response = api_as("viewer").get(url, {"limit": HUGE})

    assert response.status_code == 200
    assert len(response.json()["results"]) <= PAGE_SIZE_MAX
    assert f"limit={PAGE_SIZE_MAX}" in (response.json()["next"] or f"limit={PAGE_SIZE_MAX}")


@pytest.mark.parametrize("url", ["/api/audit/", "/api/clusters/prod/partitions/"])
def test_it_refuses_a_huge_offset(cluster, url):
    response = api_as("viewer").get(url, {"offset": HUGE})

    assert response.status_code == 400
    assert "offset" in response.json()
