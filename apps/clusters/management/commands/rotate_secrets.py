from django.apps import apps
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import models, transaction

from apps.core.secret_fields import EncryptedTextField, EncryptedValue
from apps.core.secrets import SETTING, SecretDecryptError, secret_key_generate, secret_rotate


def _encrypted_fields() -> list[tuple[type[models.Model], list[str]]]:
    found = []
    for model in apps.get_models():
        names = [
            f.attname for f in model._meta.concrete_fields if isinstance(f, EncryptedTextField)
        ]
        if names:
            found.append((model, names))
    return found


class Command(BaseCommand):
    help = (
        f"Re-encrypt every stored secret with the first key of {SETTING}, after which the "
        "other keys can be removed (docs/security.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--generate-key",
            action="store_true",
            help=f"only print a new key to put first in {SETTING}",
        )

    def handle(self, *args, **options) -> None:
        if options["generate_key"]:
            self.stdout.write(secret_key_generate())
            return
        rotated = 0
        # All or nothing: one secret no key decrypts leaves every row as it was.
        with transaction.atomic():
            for model, names in _encrypted_fields():
                rows = model._default_manager.select_for_update().values_list("pk", *names)
                for pk, *values in rows:
                    changes = {}
                    for name, value in zip(names, values, strict=True):
                        if not isinstance(value, EncryptedValue):
                            continue  # empty: nothing stored
                        try:
                            changes[name] = EncryptedValue(secret_rotate(value.token))
                        except SecretDecryptError as exc:
                            raise CommandError(
                                f"{model._meta.label} {pk} {name}: {exc}; nothing was changed"
                            ) from exc
                    if changes:
                        model._default_manager.filter(pk=pk).update(**changes)
                        rotated += len(changes)
        self.stdout.write(
            f"re-encrypted {rotated} secret(s) with the first key of {SETTING}; "
            "keys after the first may now be removed"
        )
