import pytest

from .factories import cluster_make, user_make


@pytest.fixture
def cluster(db):
    return cluster_make()


@pytest.fixture
def viewer(db):
    return user_make("vic", "viewer")


@pytest.fixture
def operator(db):
    return user_make("olga", "operator")


@pytest.fixture
def approver(db):
    return user_make("anna", "approver")


@pytest.fixture
def nobody(db):
    """Signed in, but in no role group."""
    return user_make("nora")
