"""Thousands of existing rows rewritten (or upserted) by one statement's worth of
server work: on PostgreSQL the rows are COPYed into a temporary table and applied by
one `UPDATE … FROM` / `INSERT … SELECT … ON CONFLICT`; elsewhere one prepared
statement executed for every row (what SQLite is fast at).

On PostgreSQL an `executemany` runs one statement per row: on a large cluster a round
in which leaders move spends much server CPU in them (a row per changed partition,
topic and count). A `VALUES` list of the same rows costs more on the client (every
value formatted into the statement) than it saves on the server; COPY sends each row
as a cheap line."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Model


def _names(model: type[Model], fields: Sequence[str]) -> list[str]:
    return [model._meta.get_field(f).column for f in fields]


def rows_insert(*, model: type[Model], columns: Sequence[str], rows: Sequence[Sequence]) -> None:
    """Insert new rows, tuples of database-ready values in the order of `columns`
    (model field names; JSON as text): COPY on PostgreSQL, else one prepared INSERT
    executed for every row (also the metrics' window rows and a plan's moves)."""
    if not rows:
        return
    db = connections[DEFAULT_DB_ALIAS]
    qn = db.ops.quote_name
    table = qn(model._meta.db_table)
    names = ", ".join(qn(c) for c in _names(model, columns))
    with db.cursor() as cursor:
        if db.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as pipe:
                for row in rows:
                    pipe.write_row(row)
            return
        placeholders = ", ".join(["%s"] * len(columns))
        cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({placeholders})", rows)


def rows_update(
    *,
    model: type[Model],
    key_fields: Sequence[str],
    fields: Sequence[str],
    rows: Sequence[Sequence],
) -> None:
    """Set `fields` of the rows found by `key_fields` (model field names; together a
    unique key). Each row is the database-ready values of the keys, then of the fields."""
    if not rows:
        return
    db = connections[DEFAULT_DB_ALIAS]
    qn = db.ops.quote_name
    table = qn(model._meta.db_table)
    keys, values = _names(model, key_fields), _names(model, fields)
    if db.vendor != "postgresql":
        sql = "UPDATE {} SET {} WHERE {}".format(
            table,
            ", ".join(f"{qn(c)} = %s" for c in values),
            " AND ".join(f"{qn(c)} = %s" for c in keys),
        )
        with db.cursor() as cursor:
            cursor.executemany(sql, [(*row[len(keys) :], *row[: len(keys)]) for row in rows])
        return
    apply = "UPDATE {} SET {} FROM {{staged}} AS s WHERE {}".format(
        table,
        ", ".join(f"{qn(c)} = s.{qn(c)}" for c in values),
        " AND ".join(f"{table}.{qn(c)} = s.{qn(c)}" for c in keys),
    )
    _staged_apply(db=db, model=model, columns=keys + values, rows=rows, apply=apply)


def rows_upsert(
    *, model: type[Model], key_field: str, fields: Sequence[str], rows: Sequence[Sequence]
) -> None:
    """Insert the rows, or set `fields` of the one with the same `key_field` (unique).
    Each row is the database-ready values of the key, then of the fields."""
    if not rows:
        return
    db = connections[DEFAULT_DB_ALIAS]
    qn = db.ops.quote_name
    table = qn(model._meta.db_table)
    columns = _names(model, [key_field, *fields])
    names = ", ".join(qn(c) for c in columns)
    conflict = f"ON CONFLICT ({qn(columns[0])}) DO UPDATE SET " + ", ".join(
        f"{qn(c)} = EXCLUDED.{qn(c)}" for c in columns[1:]
    )
    if db.vendor != "postgresql":
        # SQLite (3.24+) takes the same clause as PostgreSQL.
        placeholders = ", ".join(["%s"] * len(columns))
        with db.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({placeholders}) {conflict}", rows
            )
        return
    apply = f"INSERT INTO {table} ({names}) SELECT {names} FROM {{staged}} {conflict}"
    _staged_apply(db=db, model=model, columns=columns, rows=rows, apply=apply)


def _staged_apply(
    *, db, model: type[Model], columns: list[str], rows: Sequence[Sequence], apply: str
) -> None:
    """COPY `rows` into a temporary table of `columns` of the model's table, then run
    `apply` (which reads it as {staged}) and drop it: two statements and the COPY, in
    one transaction (a failed apply rolls the table back with it; one left anyway is
    dropped by the next call)."""
    qn = db.ops.quote_name
    # pg_temp: only ever a temporary table, whatever the schema holds.
    name = f"pg_temp.{qn('bulk_' + model._meta.db_table)}"
    names = ", ".join(qn(c) for c in columns)
    # One transaction, so the three run on one server session (behind a pooler too);
    # no savepoint inside another: its failure fails the outer one anyway.
    with transaction.atomic(using=db.alias, savepoint=False), db.cursor() as cursor:
        # The table's column types; no constraint or index to keep up while filling it.
        cursor.execute(
            f"DROP TABLE IF EXISTS {name}; CREATE TEMPORARY TABLE {name.removeprefix('pg_temp.')}"
            f" AS SELECT {names} FROM {qn(model._meta.db_table)} WITH NO DATA"
        )
        with cursor.cursor.copy(f"COPY {name} ({names}) FROM STDIN") as pipe:
            for row in rows:
                pipe.write_row(row)
        cursor.execute(f"{apply.replace('{staged}', name)}; DROP TABLE {name}")
