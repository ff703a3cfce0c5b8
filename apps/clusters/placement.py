"""The broker x topic counts the heatmap reads (TopicPlacement), written by the sync
for the topics it created or changed in a round, and for no other."""

from collections import Counter
from typing import TYPE_CHECKING

from .models import TopicPlacement

if TYPE_CHECKING:
    from .services import TopicState


def topic_placements_apply(*, topics: list[tuple[int, "TopicState"]]) -> None:
    """Upsert the counts of these (topic id, state) pairs, in one statement per batch.
    Kept apart from the sync's diff so it stays one small call there."""
    rows = []
    for topic_id, state in topics:
        replicas: Counter[int] = Counter()
        leaders: Counter[int] = Counter()
        for p in state.partitions:
            replicas.update(p.replicas)
            if p.leader is not None and p.leader >= 0:
                leaders[p.leader] += 1
        rows.append(
            TopicPlacement(
                topic_id=topic_id,
                replicas={str(b): n for b, n in replicas.items()},
                leaders={str(b): n for b, n in leaders.items()},
                replicas_total=sum(replicas.values()),
                leaders_total=sum(leaders.values()),
            )
        )
    TopicPlacement.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["topic"],
        update_fields=["replicas", "leaders", "replicas_total", "leaders_total"],
    )
