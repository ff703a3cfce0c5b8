"""A lease on a database row, taken by compare-and-set: one holder at a time, and a
holder that dies lets go when the lease expires.

The row keeps the holder in `owner_field` and the expiry in `until_field`; taking it
is one UPDATE that matches only a free (or expired) row, so two takers can't both win.
"""

from datetime import timedelta

from django.db.models import Model, Q, QuerySet
from django.utils import timezone


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


def lease_release(*, row: QuerySet[Model], owner: str, owner_field: str, until_field: str) -> None:
    """Let go of the lease if `owner` still holds it."""
    row.filter(**{owner_field: owner}).update(**{owner_field: "", until_field: None})
