"""Cluster secrets are stored encrypted, rotate to a new key, and never leave as text."""

import io
import os
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from apps.clusters.models import Cluster
from apps.clusters.services import cluster_sync
from apps.clusters.sync_outcome import SyncOutcome
from apps.core.secret_fields import EncryptedValue
from apps.core.secrets import SecretDecryptError, secrets_fernet

pytestmark = pytest.mark.django_db

PASSWORD = "s3cret-Passw0rd"
KEY_PEM = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49\n-----END PRIVATE KEY-----"
OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def stored(cluster: Cluster, column: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM clusters_cluster WHERE id = %s", [cluster.pk])
        return cursor.fetchone()[0]


def secured(name: str = "prod") -> Cluster:
    return Cluster.objects.create(
        name=name,
        bootstrap_servers="k1:9093",
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="balancer",
        sasl_password=PASSWORD,
        ssl_key_pem=KEY_PEM,
    )


def test_it_stores_secrets_encrypted_and_reads_them_back(settings):
    settings.BALANCER_SECRET_KEYS = [OLD]
    cluster = secured()
    for column, plaintext in (("sasl_password", PASSWORD), ("ssl_key_pem", KEY_PEM)):
        raw = stored(cluster, column)
        assert plaintext not in raw and "PRIVATE KEY" not in raw
        assert Fernet(OLD).decrypt(raw.encode()).decode() == plaintext
    fresh = Cluster.objects.get(pk=cluster.pk)
    assert fresh.sasl_password == PASSWORD and fresh.ssl_key_pem == KEY_PEM
    assert fresh.connection.sasl_password == PASSWORD


def test_it_leaves_empty_secrets_empty():
    cluster = Cluster.objects.create(name="dev", bootstrap_servers="k1:9092")
    assert stored(cluster, "sasl_password") == ""
    assert Cluster.objects.get(pk=cluster.pk).sasl_password == ""


def test_a_wrong_key_fails_only_where_the_secret_is_read(settings):
    settings.BALANCER_SECRET_KEYS = [OLD]
    cluster = secured()
    token = stored(cluster, "sasl_password")
    settings.BALANCER_SECRET_KEYS = [NEW]

    fresh = Cluster.objects.get(pk=cluster.pk)  # pages that never read it still work
    fresh.last_sync_error = "x"
    fresh.save()
    fresh.refresh_from_db()
    assert stored(cluster, "sasl_password") == token  # written back as it was
    with pytest.raises(SecretDecryptError, match="does not decrypt with any key"):
        fresh.connection  # noqa: B018


def test_rotation_re_encrypts_every_secret_with_the_first_key(settings):
    settings.BALANCER_SECRET_KEYS = [OLD]
    clusters = [
        secured("a"),
        secured("b"),
        Cluster.objects.create(name="c", bootstrap_servers="k:1"),
    ]
    settings.BALANCER_SECRET_KEYS = [NEW, OLD]
    out = io.StringIO()
    call_command("rotate_secrets", stdout=out)
    assert "re-encrypted 4 secret(s)" in out.getvalue()

    settings.BALANCER_SECRET_KEYS = [NEW]  # the old key can go
    for cluster in clusters[:2]:
        assert Fernet(NEW).decrypt(stored(cluster, "sasl_password").encode()).decode() == PASSWORD
        fresh = Cluster.objects.get(pk=cluster.pk)
        assert (fresh.sasl_password, fresh.ssl_key_pem) == (PASSWORD, KEY_PEM)


def test_rotation_changes_nothing_when_a_secret_does_not_decrypt(settings):
    settings.BALANCER_SECRET_KEYS = [OLD]
    readable = secured("a")
    settings.BALANCER_SECRET_KEYS = [NEW]
    unreadable = secured("b")  # encrypted with NEW ...
    settings.BALANCER_SECRET_KEYS = [OLD]  # ... which is then dropped by mistake
    before = stored(readable, "sasl_password")
    with pytest.raises(CommandError, match=f"clusters.Cluster {unreadable.pk} sasl_password"):
        call_command("rotate_secrets", stdout=io.StringIO())
    assert stored(readable, "sasl_password") == before


def test_it_generates_a_usable_key():
    out = io.StringIO()
    call_command("rotate_secrets", "--generate-key", stdout=out)
    Fernet(out.getvalue().strip())


def test_a_malformed_key_is_reported_without_echoing_it(settings):
    settings.BALANCER_SECRET_KEYS = [NEW, "my-typo-key"]
    with pytest.raises(ImproperlyConfigured, match="key 2 of 2 is not a Fernet key") as raised:
        secrets_fernet()
    assert "my-typo-key" not in str(raised.value)


def test_production_settings_refuse_to_start_without_keys():
    env = {**os.environ, "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "x"}
    env.pop("BALANCER_SECRET_KEYS", None)
    code = "import balancer_site.settings"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "BALANCER_SECRET_KEYS must be set" in done.stderr
    env["BALANCER_SECRET_KEYS"] = NEW
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


def test_secrets_stay_out_of_dumps_str_and_values():
    cluster = secured()
    out = io.StringIO()
    call_command("dumpdata", "clusters.cluster", stdout=out)
    dump = out.getvalue()
    assert PASSWORD not in dump and "PRIVATE KEY" not in dump
    assert stored(cluster, "sasl_password") not in dump
    assert '"sasl_password": ""' in dump and '"sasl_username": "balancer"' in dump
    assert PASSWORD not in str(cluster) + repr(cluster)
    (value,) = Cluster.objects.values_list("sasl_password", flat=True)
    assert isinstance(value, EncryptedValue) and repr(value) == "<encrypted>"


def test_a_cluster_whose_secret_no_key_reads_fails_its_sync_with_that_reason(settings):
    settings.BALANCER_SECRET_KEYS = [OLD]
    cluster = secured()
    settings.BALANCER_SECRET_KEYS = [NEW]

    assert cluster_sync(cluster=Cluster.objects.get(pk=cluster.pk)) is SyncOutcome.FAILED
    cluster.refresh_from_db()
    assert "does not decrypt with any key in BALANCER_SECRET_KEYS" in cluster.last_sync_error
