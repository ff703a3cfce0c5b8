"""Helpers with no domain: bulk row writes (`bulk_write`), JSON list queries
(`json_lists`), backoff arithmetic (`backoff`). Not a Django app; imports no app."""
