"""The broker x topic counts the heatmap reads (TopicPlacement), written by the sync
for the topics it created or changed in a round, and for no other."""

from collections import Counter
from collections.abc import Iterable
from itertools import chain

from django.db import DEFAULT_DB_ALIAS, connections

from apps.core.bulk_write import rows_upsert

from .models import TopicPlacement

# One partition as the counts need it: (leader or None, replica list).
LeaderReplicas = tuple[int | None, list[int]]

_FIELDS = ("topic", "replicas", "leaders", "replicas_total", "leaders_total")


def topic_placements_apply(*, topics: list[tuple[int, Iterable[LeaderReplicas]]]) -> None:
    """Upsert the counts of these topics (id, its partitions) in bulk
    (bulk_write.rows_upsert). Kept apart from the sync's diff so it stays one
    small call there."""
    if not topics:
        return
    db = connections[DEFAULT_DB_ALIAS]  # not the proxy: once per value of every row
    fields = [TopicPlacement._meta.get_field(name) for name in _FIELDS]
    replicas_field, leaders_field = fields[1], fields[2]
    params = []
    for topic_id, partitions in topics:
        pairs = list(partitions)
        # Counter's C loop over flat iterables; keys in the order first met.
        replicas = Counter(chain.from_iterable(r for _, r in pairs))
        leaders = Counter(leader for leader, _ in pairs if leader is not None and leader >= 0)
        params.append(
            (
                topic_id,
                replicas_field.get_db_prep_save({str(b): n for b, n in replicas.items()}, db),
                leaders_field.get_db_prep_save({str(b): n for b, n in leaders.items()}, db),
                sum(replicas.values()),
                sum(leaders.values()),
            )
        )
    # Not bulk_create: its batches on SQLite are bounded by the 999-parameter limit, so
    # a round that changes many topics would take many statements.
    rows_upsert(model=TopicPlacement, key_field=_FIELDS[0], fields=_FIELDS[1:], rows=params)
