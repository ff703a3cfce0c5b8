"""Existing clusters' raw client_config moves into the typed connection settings."""

import importlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from apps.clusters.models import Cluster
from tests.clusters.pki import Pki
from tests.support.migrations import latest_migrate, migrated_back_to

migration = importlib.import_module("apps.clusters.migrations.0002_connection_settings")
BEFORE = [("clusters", "0001_initial")]
AFTER = [("clusters", "0002_connection_settings")]


def clusters_as_of_0002():
    # The model as it is now, without the columns later migrations add.
    return Cluster.objects.defer("sync_failures", "next_sync_at")


def test_it_maps_every_librdkafka_security_key(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
    values, problems = migration.fields_from_client_config(
        {
            "security.protocol": "sasl_ssl",
            "sasl.mechanisms": "SCRAM-SHA-512",
            "sasl.username": "balancer",
            "sasl.password": "p",
            "ssl.ca.location": str(ca),
            "ssl.endpoint.identification.algorithm": "none",
            "enable.ssl.certificate.verification": "true",
        }
    )
    assert problems == []
    assert values == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "balancer",
        "sasl_password": "p",
        "ssl_ca_pem": "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----",
        "ssl_verify_hostname": False,
    }


def test_it_names_each_key_it_cannot_carry_over(tmp_path):
    _values, problems = migration.fields_from_client_config(
        {
            "sasl.mechanism": "GSSAPI",
            "ssl.key.location": str(tmp_path / "missing.pem"),
            "enable.ssl.certificate.verification": "false",
            "linger.ms": 5,
        }
    )
    assert [p.split(" ")[0] for p in problems] == [
        "sasl.mechanism",
        "ssl.key.location",
        "enable.ssl.certificate.verification",
        "linger.ms",
    ]
    assert "cannot read the file" in problems[1]


@pytest.fixture
def migrated_back(transactional_db, django_db_serialized_rollback):
    yield from migrated_back_to(BEFORE)


def test_the_migration_moves_settings_and_encrypts_the_password(migrated_back):
    pki = Pki()
    old = migrated_back.loader.project_state(BEFORE).apps.get_model("clusters", "Cluster")
    old.objects.create(name="plain", bootstrap_servers="k1:9092", client_config={})
    old.objects.create(
        name="secure",
        bootstrap_servers="k1:9093",
        client_config={
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "balancer",
            "sasl.password": "p4ss",
            "ssl.ca.pem": pki.ca_pem,
        },
    )
    migrated_back.migrate(AFTER)
    latest_migrate()

    plain, secure = clusters_as_of_0002().order_by("name")
    assert plain.security_protocol == "PLAINTEXT" and plain.sasl_password == ""
    assert secure.connection.redacted() | {"sasl_password": secure.sasl_password} == {
        "bootstrap_servers": "k1:9093",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_username": "balancer",
        "sasl_password": "p4ss",
        "ssl_ca_pem": pki.ca_pem.strip(),
        "ssl_certificate_pem": "",
        "ssl_key_pem": "",
        "ssl_verify_hostname": True,
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT sasl_password FROM clusters_cluster WHERE name = 'secure'")
        assert "p4ss" not in cursor.fetchone()[0]


def test_the_migration_stops_on_a_key_it_cannot_carry_over(migrated_back):
    old = migrated_back.loader.project_state(BEFORE).apps.get_model("clusters", "Cluster")
    old.objects.create(name="odd", bootstrap_servers="k1:9092", client_config={"linger.ms": 5})
    with pytest.raises(RuntimeError, match="odd: linger.ms"):
        migrated_back.migrate(AFTER)
    old.objects.filter(name="odd").update(client_config={})
    MigrationExecutor(connection).migrate(AFTER)
    latest_migrate()
    assert Cluster.objects.get(name="odd").security_protocol == "PLAINTEXT"


def test_the_migration_reverses_to_the_same_client_config(migrated_back):
    config = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
        "sasl.password": "p",
        "ssl.endpoint.identification.algorithm": "none",
    }
    old = migrated_back.loader.project_state(BEFORE).apps.get_model("clusters", "Cluster")
    old.objects.create(name="secure", bootstrap_servers="k1:9093", client_config=config)
    migrated_back.migrate(AFTER)
    MigrationExecutor(connection).migrate(BEFORE)
    assert old.objects.get(name="secure").client_config == config
