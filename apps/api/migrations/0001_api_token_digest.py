"""API tokens kept as SHA-256 digests. Keys issued earlier (DRF's authtoken table, which
stored them in plain text) are hashed into the new table, so they keep working, and
their plain copies are deleted. Going back cannot restore a key from its digest: it
leaves the tokens to be issued again."""

import hashlib
from datetime import UTC, datetime

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils.dateparse import parse_datetime

PLAIN_TABLE = "authtoken_token"


def _aware(value: datetime | str) -> datetime:
    # SQLite hands the column back as text, in UTC (as Django wrote it).
    moment = parse_datetime(value) if isinstance(value, str) else value
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def plain_tokens_hash(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if PLAIN_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("api", "ApiToken")
    quote = connection.ops.quote_name
    table = quote(PLAIN_TABLE)
    columns = ", ".join(quote(c) for c in ("key", "user_id", "created"))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM {table}")  # noqa: S608 (constants)
        for key, user_id, created in cursor.fetchall():
            token = ApiToken.objects.create(
                user_id=user_id, digest=hashlib.sha256(key.encode()).hexdigest()
            )
            ApiToken.objects.filter(pk=token.pk).update(created_at=_aware(created))
        cursor.execute(f"DELETE FROM {table}")  # noqa: S608 (constant)


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("digest", models.CharField(editable=False, max_length=64, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_token",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "API token",
            },
        ),
        migrations.RunPython(plain_tokens_hash, migrations.RunPython.noop),
    ]
