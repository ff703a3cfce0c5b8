"""The broker x topic counts the heatmap reads (TopicPlacement), written by the sync
for the topics it created or changed in a round, and for no other."""

from collections import Counter
from collections.abc import Iterable

from .models import TopicPlacement

# One partition as the counts need it: (leader or None, replica list).
LeaderReplicas = tuple[int | None, list[int]]


def topic_placements_apply(*, topics: list[tuple[int, Iterable[LeaderReplicas]]]) -> None:
    """Upsert the counts of these topics (id, its partitions), in one statement per
    batch. Kept apart from the sync's diff so it stays one small call there."""
    rows = []
    for topic_id, partitions in topics:
        replicas: Counter[int] = Counter()
        leaders: Counter[int] = Counter()
        for leader, replica_list in partitions:
            replicas.update(replica_list)
            if leader is not None and leader >= 0:
                leaders[leader] += 1
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
