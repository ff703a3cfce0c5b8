"""A filter on a JSON list column, in the database on every backend Django supports here.

Django's `__contains` on a JSONField is PostgreSQL's binary containment and does not
exist on SQLite; reading every row's list into Python instead, then naming the matches
in an IN list, is slow on large tables (a plan's moves, a cluster's partitions).
"""

from django.db import connection
from django.db.models import BooleanField, Model, Q
from django.db.models.expressions import RawSQL


def json_list_has(*, model: type[Model], field: str, value: int | str) -> Q:
    """Rows of `model` whose JSON list `field` holds `value`: `@>` on PostgreSQL, SQLite's
    json_each elsewhere (the table unaliased: the model's own rows, not a join's)."""
    if connection.vendor == "postgresql":
        return Q(**{f"{field}__contains": [value]})
    quote = connection.ops.quote_name
    column = f"{quote(model._meta.db_table)}.{quote(model._meta.get_field(field).column)}"
    return Q(
        RawSQL(
            f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.value = %s)",
            [value],
            output_field=BooleanField(),
        )
    )
