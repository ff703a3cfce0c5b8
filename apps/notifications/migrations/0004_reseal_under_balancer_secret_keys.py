"""Channel URLs and signing secrets move from a key derived from DJANGO_SECRET_KEY to
the product's keys (BALANCER_SECRET_KEYS, apps.core.secrets), which `rotate_secrets`
rotates. A value the old key cannot read already read as empty; it is stored empty.
A value the new keys already read is left as it is, so running this twice is harmless.
"""

import base64
import hashlib
import logging

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.db import migrations

from apps.core.secrets import secrets_fernet

logger = logging.getLogger(__name__)
TABLE = "notifications_notificationchannel"
COLUMNS = ("url", "secret")


def _old_fernet() -> Fernet:
    digest = hashlib.sha256(b"kafka-balancer/notifications/" + settings.SECRET_KEY.encode())
    return Fernet(base64.urlsafe_b64encode(digest.digest()))


def _reseal(value: str, *, read, write, written) -> str:
    try:
        return write(read(value.encode())).decode()
    except InvalidToken:
        pass
    try:
        written(value.encode())
    except InvalidToken:
        return ""
    return value


def _rewrite(schema_editor, *, read, write, written) -> None:
    connection = schema_editor.connection
    quote = connection.ops.quote_name
    columns = ", ".join(quote(c) for c in COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, {columns} FROM {quote(TABLE)}")  # noqa: S608 (constants)
        rows = cursor.fetchall()
        for pk, *values in rows:
            sealed = [
                _reseal(v, read=read, write=write, written=written) if v else v for v in values
            ]
            if sealed == values:
                continue
            if any(v and not s for v, s in zip(values, sealed, strict=True)):
                logger.warning("notification channel %s: a value no key reads is emptied", pk)
            assignments = ", ".join(f"{quote(c)} = %s" for c in COLUMNS)
            cursor.execute(
                f"UPDATE {quote(TABLE)} SET {assignments} WHERE id = %s",  # noqa: S608
                [*sealed, pk],
            )


def forwards(apps, schema_editor) -> None:
    new, old = secrets_fernet(), _old_fernet()
    _rewrite(schema_editor, read=old.decrypt, write=new.encrypt, written=new.decrypt)


def backwards(apps, schema_editor) -> None:
    new, old = secrets_fernet(), _old_fernet()
    _rewrite(schema_editor, read=new.decrypt, write=old.encrypt, written=old.decrypt)


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0003_delivery_events_execution_paused_resumed_tuned"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
