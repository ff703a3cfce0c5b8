"""An API token is stored as a digest only: no column of any table holds the key, and
the key still authenticates. A token issued before (kept in plain text by DRF's
authtoken) is hashed by the migration and keeps working."""

from importlib import import_module
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.db import connection
from rest_framework.test import APIClient

from tests.support.factories import user_make

pytestmark = pytest.mark.django_db

PASSWORD = "s3cret-pass-for-the-bot"
MIGRATION = "apps.api.migrations.0001_api_token_digest"


def _tables_holding(text: str) -> list[str]:
    """Every table.column whose stored text contains `text`."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            columns = [
                c.name for c in connection.introspection.get_table_description(cursor, table)
            ]
            for column in columns:
                quoted = connection.ops.quote_name
                cursor.execute(
                    f"SELECT COUNT(*) FROM {quoted(table)} "  # noqa: S608 (introspected)
                    f"WHERE CAST({quoted(column)} AS TEXT) LIKE %s",
                    [f"%{text}%"],
                )
                if cursor.fetchone()[0]:
                    found.append(f"{table}.{column}")
    return found


def test_it_keeps_only_a_digest_of_an_api_token_and_it_authenticates(cluster):
    user_make("bot", "viewer", password=PASSWORD)
    api = APIClient()

    response = api.post("/api/auth/token/", {"username": "bot", "password": PASSWORD})

    assert response.status_code == 200
    key = response.json()["token"]
    assert _tables_holding(key) == []
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/clusters/").status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {key[:-1]}x")
    assert api.get("/api/clusters/").status_code == 401


def test_a_token_kept_in_plain_text_before_is_hashed_and_keeps_working(cluster):
    user = user_make("bot", "viewer", password=PASSWORD)
    key = "0123456789abcdef0123456789abcdef01234567"
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS authtoken_token "
            "(key varchar(40) PRIMARY KEY, user_id integer NOT NULL, created timestamp NOT NULL)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token (key, user_id, created) VALUES (%s, %s, %s)",
            [key, user.pk, "2026-01-01 00:00:00"],
        )

    import_module(MIGRATION).plain_tokens_hash(apps, SimpleNamespace(connection=connection))

    assert _tables_holding(key) == []
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/clusters/").status_code == 200
