"""Every client of a cluster is built from its connection settings."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.clusters.models import Cluster
from apps.clusters.services import log_dirs_read  # the real one (conftest stubs the sync's)
from apps.kafka_layer import kafka_python_adapter
from apps.kafka_layer.clients import client_config_build, client_timeouts
from apps.kafka_layer.connection import ConnectionSettings
from apps.metrics.services import kafka_source_options, replica_sizes_read
from apps.plans.kafka_ops import LiveKafka

pytestmark = pytest.mark.django_db


@pytest.fixture
def secured(pki) -> Cluster:
    return Cluster.objects.create(
        name="secured",
        bootstrap_servers="b1.example.com:9093",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="balancer",
        sasl_password="pw",
        ssl_ca_pem=pki.ca_pem,
    )


def test_the_connect_timeout_is_short_and_never_longer_than_a_request(settings):
    settings.KAFKA_REQUEST_TIMEOUT = 10.0
    settings.KAFKA_CONNECT_TIMEOUT = 5.0
    assert (client_timeouts().request, client_timeouts().connect) == (10.0, 5.0)
    settings.KAFKA_CONNECT_TIMEOUT = 30.0
    assert client_timeouts().connect == 10.0


def test_it_needs_exactly_one_of_a_connection_and_a_bootstrap_list():
    with pytest.raises(TypeError):
        client_config_build()
    with pytest.raises(TypeError):
        client_config_build(connection=ConnectionSettings("k:1"), bootstrap_servers="k:1")


def test_the_spark_source_gets_the_jaas_line_and_the_pem_trust_store(secured):
    options = kafka_source_options(cluster=secured)
    assert options["security.protocol"] == "SASL_SSL"
    assert "ScramLoginModule required" in options["sasl.jaas.config"]
    assert options["ssl.truststore.type"] == "PEM"


@pytest.fixture
def adapter_calls(monkeypatch):
    """Replace kafka-python adapter functions by ones that record their arguments."""
    calls: dict[str, dict] = {}

    def replace(name: str) -> None:
        def record(**kwargs):
            calls[name] = kwargs
            return {}

        monkeypatch.setattr(kafka_python_adapter, name, record)

    replace("reassignments_list")
    replace("log_sizes_describe")
    replace("log_dirs_describe")
    return calls


def test_the_executor_hands_the_connection_to_kafka_python(secured, adapter_calls):
    LiveKafka(connection=secured.connection, admin=object()).reassignments_list([("t", 0)])
    assert adapter_calls["reassignments_list"]["connection"] == secured.connection


def test_the_sampler_reads_replica_sizes_with_the_connection(secured, adapter_calls):
    assert replica_sizes_read(cluster=secured) == {}
    assert adapter_calls["log_sizes_describe"] == {"connection": secured.connection}


def test_it_reads_the_sync_s_log_dirs_with_the_connection(secured, adapter_calls):
    assert log_dirs_read(cluster=secured) == ({}, "")
    assert adapter_calls["log_dirs_describe"] == {"connection": secured.connection}


def test_demo_traffic_reaches_a_registered_cluster_by_name():
    with pytest.raises(CommandError, match="no cluster named 'nope'"):
        call_command("demo_traffic", "--cluster", "nope", "--duration", "0")
    with pytest.raises(CommandError, match="not allowed with argument"):
        call_command("demo_traffic", "--cluster", "a", "--bootstrap-servers", "k:1")
