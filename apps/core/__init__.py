"""Helpers with no domain: bulk row writes (`bulk_write`), JSON list queries
(`json_lists`), backoff arithmetic (`backoff`), secrets sealed at rest (`secrets`, and
their model field `secret_fields`). Not a Django app; imports no app."""
