"""A model field whose value is stored encrypted (apps.core.secrets).

Rows load with the ciphertext; it is decrypted the first time the attribute is
read, so pages that never touch a secret never need the key, and a cluster whose
secret cannot be decrypted fails alone, when something connects to it. A value
nobody read is written back as the same ciphertext. Generic readers (form
initials) get the ciphertext, serializers (dumpdata, exports) an empty string:
secrets leave the database decrypted only on an explicit read of the attribute.
Lookups on the field cannot match (every encryption differs).
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import models
from django.db.models.query_utils import DeferredAttribute

from .secrets import secret_decrypt, secret_encrypt


class EncryptedValue:
    """A ciphertext as loaded from the database (what values()/values_list() return)."""

    __slots__ = ("token",)

    def __init__(self, token: str) -> None:
        self.token = token

    def __repr__(self) -> str:
        return "<encrypted>"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EncryptedValue) and other.token == self.token

    def __hash__(self) -> int:
        return hash(self.token)


_raw_reads: ContextVar[bool] = ContextVar("encrypted_raw_reads", default=False)


@contextmanager
def ciphertext_reads() -> Iterator[None]:
    """Reads of encrypted attributes give the ciphertext meanwhile (for copying values)."""
    token = _raw_reads.set(True)
    try:
        yield
    finally:
        _raw_reads.reset(token)


class _DecryptOnRead(DeferredAttribute):
    # A data descriptor (it has __set__), so every read passes through __get__.
    def __get__(self, instance, cls=None):
        if instance is None:
            return self
        value = super().__get__(instance, cls)
        if isinstance(value, EncryptedValue) and not _raw_reads.get():
            value = secret_decrypt(value.token)
            instance.__dict__[self.field.attname] = value
        return value

    def __set__(self, instance, value) -> None:
        instance.__dict__[self.field.attname] = value


class EncryptedTextField(models.TextField):
    descriptor_class = _DecryptOnRead

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return EncryptedValue(value) if value else value

    def to_python(self, value: Any) -> Any:
        if isinstance(value, EncryptedValue):
            return value
        return super().to_python(value)

    def pre_save(self, model_instance: models.Model, add: bool) -> Any:
        # Not getattr(): saving must not decrypt what nobody read.
        return model_instance.__dict__.get(self.attname)

    def value_from_object(self, obj: models.Model) -> Any:
        # Generic readers (model_to_dict for form initials, ...) get the ciphertext.
        return obj.__dict__.get(self.attname)

    def get_prep_value(self, value: Any) -> Any:
        if isinstance(value, EncryptedValue):
            return value.token
        value = super().get_prep_value(value)
        return secret_encrypt(value) if value else value

    def value_to_string(self, obj: models.Model) -> str:
        return ""


def encrypted_is_set(instance: models.Model, attname: str) -> bool:
    """Whether a secret is stored, without decrypting it (a page may say "set")."""
    return bool(instance.__dict__.get(attname))
