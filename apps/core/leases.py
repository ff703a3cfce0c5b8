"""A lease on a database row, taken by compare-and-set: one holder at a time, and a
holder that dies lets go when the lease expires.

The row keeps the holder in `owner_field` and the expiry in `until_field`; taking it
is one UPDATE that matches only a free (or expired) row, so two takers can't both win.
"""

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import DatabaseError, connection
from django.db.models import Model, Q, QuerySet
from django.utils import timezone

logger = logging.getLogger(__name__)


def lease_take(
    *,
    row: QuerySet[Model],
    owner: str,
    seconds: float,
    owner_field: str,
    until_field: str,
    renew: bool = False,
) -> bool:
    """Hold the lease of the row `row` selects for `seconds`; False while another
    holder's lease is live. With `renew`, a lease `owner` holds is extended."""
    now = timezone.now()
    free = Q(**{f"{until_field}__isnull": True}) | Q(**{f"{until_field}__lte": now})
    if renew:
        free |= Q(**{owner_field: owner})
    taken = row.filter(free).update(
        **{owner_field: owner, until_field: now + timedelta(seconds=seconds)}
    )
    return bool(taken)


def lease_renew(
    *, row: QuerySet[Model], owner: str, seconds: float, owner_field: str, until_field: str
) -> bool:
    """Extend the lease if `owner` still holds it (never takes a free one)."""
    until = timezone.now() + timedelta(seconds=seconds)
    return bool(row.filter(**{owner_field: owner}).update(**{until_field: until}))


def lease_release(*, row: QuerySet[Model], owner: str, owner_field: str, until_field: str) -> None:
    """Let go of the lease if `owner` still holds it."""
    row.filter(**{owner_field: owner}).update(**{owner_field: "", until_field: None})


@contextmanager
def lease_kept(
    *, row: QuerySet[Model], owner: str, seconds: float, owner_field: str, until_field: str
) -> Iterator[None]:
    """Renew a held lease every third of its length while the block runs, so a lease can
    be short (a dead holder lets go soon) however long the work takes. The renewals run
    in a thread of their own, with its own database connection."""
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(seconds / 3):
                try:
                    lease_renew(
                        row=row,
                        owner=owner,
                        seconds=seconds,
                        owner_field=owner_field,
                        until_field=until_field,
                    )
                except DatabaseError as exc:  # the next renewal tries again
                    logger.warning("lease renewal failed: %s", exc)
        finally:
            connection.close()

    keeper = threading.Thread(target=renew, name=f"lease-{owner[:8]}", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        # Not waited for long: a renewal stuck behind a lock held by the caller's own
        # transaction ends with it, and it extends nothing once the lease is released.
        keeper.join(timeout=1)
