import pytest

from tests.dashboard.factories import cluster_make


@pytest.fixture
def cluster(db):
    return cluster_make()
