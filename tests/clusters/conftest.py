"""Fixtures for connection tests: a throwaway PKI (see pki.py)."""

import pytest

from tests.clusters.pki import Issued, Pki


@pytest.fixture(scope="session")
def pki() -> Pki:
    return Pki()


@pytest.fixture(scope="session")
def server_cert(pki: Pki) -> Issued:
    return pki.issue("broker", hosts=("localhost", "127.0.0.1"))


@pytest.fixture(scope="session")
def client_cert(pki: Pki) -> Issued:
    return pki.issue("balancer", rsa_key=True)
