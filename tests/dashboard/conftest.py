import pytest

from .factories import cluster_make


@pytest.fixture
def cluster(db):
    return cluster_make()
