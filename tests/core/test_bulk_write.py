"""apps/core/bulk_write.py on the database the tests run on (SQLite, and
PostgreSQL's COPY path under scripts/test-postgres)."""

import json

import pytest
from django.db import IntegrityError, transaction

from apps.clusters.models import Cluster, Partition, Topic, TopicPlacement
from apps.core.bulk_write import rows_insert, rows_update, rows_upsert

pytestmark = pytest.mark.django_db

_FIELDS = ("leader", "replicas", "isr", "offline", "under_replicated")


@pytest.fixture
def topics() -> list[Topic]:
    cluster = Cluster.objects.create(name="c1", bootstrap_servers="127.0.0.1:1")
    return [Topic.objects.create(cluster=cluster, name=f"t{i}") for i in range(2)]


def _partitions(topics: list[Topic]) -> list[tuple]:
    return list(
        Partition.objects.order_by("topic_id", "index").values_list(
            "topic_id", "index", "leader", "replicas", "isr", "offline", "under_replicated"
        )
    )


def test_it_inserts_rows_of_database_ready_values(topics):
    rows = [
        (t.pk, i, 1, json.dumps([1, 2]), json.dumps([1]), False, True)
        for t in topics
        for i in range(3)
    ]

    rows_insert(model=Partition, columns=("topic", "index", *_FIELDS), rows=rows)

    assert _partitions(topics) == [
        (t.pk, i, 1, [1, 2], [1], False, True) for t in topics for i in range(3)
    ]


def test_it_updates_only_the_rows_its_keys_name(topics):
    rows = [
        (t.pk, i, 1, json.dumps([1, 2]), json.dumps([1, 2]), False, False)
        for t in topics
        for i in range(2)
    ]
    rows_insert(model=Partition, columns=("topic", "index", *_FIELDS), rows=rows)
    first, second = topics

    rows_update(
        model=Partition,
        key_fields=("topic", "index"),
        fields=_FIELDS,
        rows=[(second.pk, 1, None, json.dumps([3, 2]), json.dumps([]), True, True)],
    )

    assert _partitions(topics) == [
        (first.pk, 0, 1, [1, 2], [1, 2], False, False),
        (first.pk, 1, 1, [1, 2], [1, 2], False, False),
        (second.pk, 0, 1, [1, 2], [1, 2], False, False),
        (second.pk, 1, None, [3, 2], [], True, True),
    ]


def test_it_upserts_new_and_existing_rows(topics):
    first, second = topics
    TopicPlacement.objects.create(topic=first, replicas={"1": 1}, leaders={}, replicas_total=1)

    rows_upsert(
        model=TopicPlacement,
        key_field="topic",
        fields=("replicas", "leaders", "replicas_total", "leaders_total"),
        rows=[
            (first.pk, json.dumps({"2": 4}), json.dumps({"2": 2}), 4, 2),
            (second.pk, json.dumps({"3": 1}), json.dumps({}), 1, 0),
        ],
    )

    assert list(
        TopicPlacement.objects.order_by("topic_id").values_list(
            "topic_id", "replicas", "leaders", "replicas_total", "leaders_total"
        )
    ) == [(first.pk, {"2": 4}, {"2": 2}, 4, 2), (second.pk, {"3": 1}, {}, 1, 0)]


def test_it_changes_nothing_when_a_row_is_refused_and_writes_again_after(topics):
    topic = topics[0]
    rows = [(topic.pk, i, 1, json.dumps([1]), json.dumps([1]), False, False) for i in range(2)]
    rows_insert(model=Partition, columns=("topic", "index", *_FIELDS), rows=rows)
    key = ("topic", "index")

    with pytest.raises(IntegrityError), transaction.atomic():
        rows_update(
            model=Partition,
            key_fields=key,
            fields=("leader", "replicas"),
            # replicas is NOT NULL: the second row is refused, the caller rolls back.
            rows=[(topic.pk, 0, 2, json.dumps([2])), (topic.pk, 1, 2, None)],
        )
    rows_update(model=Partition, key_fields=key, fields=("leader",), rows=[(topic.pk, 1, 3)])

    assert list(Partition.objects.order_by("index").values_list("leader", "replicas")) == [
        (1, [1]),
        (3, [1]),
    ]
