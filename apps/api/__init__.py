"""The REST API: one package per domain, with the pieces they share in `common`."""
