"""Keep the cluster model in step with the real Kafka cluster."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from itertools import chain
from typing import TYPE_CHECKING

from django.db import DEFAULT_DB_ALIAS, connection, connections, models, transaction
from django.utils import timezone

from apps.core.bulk_write import rows_insert, rows_update
from apps.core.secrets import SecretDecryptError
from apps.kafka_layer.authorization import (
    authorization_denied,
    cluster_acl_gaps_text,
    missing_acl_text,
)
from apps.kafka_layer.clients import AdminClient, ConnectionErrors, admin_client_create
from apps.kafka_layer.cluster_state import (
    BrokerState,
    ClusterNotAuthorized,
    ClusterState,
    ClusterUnreachable,
    PartitionState,
    TopicState,
    cluster_state_read,
)

from .backoff import cluster_backoff_clear, cluster_backoff_fail
from .models import Broker, Cluster, ClusterRound, Partition, Topic
from .placement import placement_diff, placement_hash, placement_pack
from .placement_counts import topic_placements_apply
from .replica_dirs import replica_dirs_pack
from .rounds import round_degraded_record, round_lease
from .signals import broker_state_changed, cluster_reachability_changed, cluster_synced
from .sync_outcome import SyncOutcome

if TYPE_CHECKING:  # kafka-python is imported where it is used (log_dirs_read)
    from apps.kafka_layer.kafka_python_adapter import BrokerLogDirs

logger = logging.getLogger(__name__)


@transaction.atomic
def cluster_state_apply(
    *,
    cluster: Cluster,
    state: ClusterState,
    now: datetime,
    log_dirs: Mapping[int, BrokerLogDirs] | None = None,
) -> None:
    """Make the models match `state`. Idempotent; brokers are never deleted.

    `log_dirs`: every live broker's log dirs (log_dirs_read); None when they could not
    be read, which keeps the log dirs last stored and forgets the replica dirs of the
    topics whose placement changed (the stored dirs would not line up with it)."""
    was_unreachable = not cluster.reachable
    cluster.kafka_cluster_id = state.cluster_id
    cluster.controller_id = state.controller_id
    cluster.last_synced_at = now
    cluster.last_sync_error = ""
    cluster.last_sync_error_at = None
    if state.cluster_operations is not None:
        cluster.access_warning = cluster_acl_gaps_text(authorized=set(state.cluster_operations))
    # Only what a sync owns: a full save would undo an edit made while it ran.
    cluster.save(
        update_fields=[
            "kafka_cluster_id",
            "controller_id",
            "last_synced_at",
            "last_sync_error",
            "last_sync_error_at",
            "access_warning",
        ]
    )

    _brokers_apply(cluster=cluster, state=state, now=now)
    rewritten = _topics_apply(cluster=cluster, state=state)
    if log_dirs is None:
        for ids in _chunks(rewritten):
            Topic.objects.filter(pk__in=ids).update(replica_dirs=None)
    else:
        _log_dirs_apply(cluster=cluster, state=state, log_dirs=log_dirs, rewritten=rewritten)
    if was_unreachable:
        cluster_reachability_changed.send(
            sender=Cluster, cluster=cluster, reachable=True, error="", at=now
        )


def _live_brokers_compare(
    *,
    cluster: Cluster,
    known: dict[int, Broker],
    live: dict[int, BrokerState],
    counts: tuple[Counter, Counter],
    now: datetime,
) -> tuple[list[Broker], list[Broker], list[int]]:
    """(rows for brokers seen for the first time, known brokers whose address, rack or
    liveness changed — updated in memory, ids of brokers that came back)."""
    replicas, leaders = counts
    new_rows, changed, came_back = [], [], []
    for node_id, seen in live.items():
        broker = known.get(node_id)
        if broker is None:
            new_rows.append(
                Broker(
                    cluster=cluster,
                    node_id=node_id,
                    host=seen.host,
                    port=seen.port,
                    rack=seen.rack,
                    alive=True,
                    first_seen=now,
                    last_seen=now,
                    replicas_count=replicas[node_id],
                    leaders_count=leaders[node_id],
                )
            )
            continue
        now_seen = (seen.host, seen.port, seen.rack, True)
        if (broker.host, broker.port, broker.rack, broker.alive) != now_seen:
            if not broker.alive:
                came_back.append(node_id)
            broker.host, broker.port, broker.rack, broker.alive = now_seen
            changed.append(broker)
    return new_rows, changed, came_back


def _brokers_apply(*, cluster: Cluster, state: ClusterState, now: datetime) -> None:
    known = {b.node_id: b for b in cluster.brokers.all()}
    live = {b.node_id: b for b in state.brokers}
    # Replicas may name brokers that are down and were never seen alive by us.
    # Counted by Counter's C loop over flat iterables, not Counter.update per partition.
    partitions = [p for t in state.topics for p in t.partitions]
    replicas = Counter(chain.from_iterable(p.replicas for p in partitions))
    leaders = Counter(p.leader for p in partitions if p.leader is not None)
    referenced = set(replicas)

    new_rows, changed, came_back = _live_brokers_compare(
        cluster=cluster, known=known, live=live, counts=(replicas, leaders), now=now
    )
    # Every live broker was seen now: one statement, whatever the number of brokers.
    cluster.brokers.filter(node_id__in=[n for n in live if n in known]).update(last_seen=now)
    Broker.objects.bulk_update(changed, ["host", "port", "rack", "alive"])

    # Keep last_seen of a vanished broker: it says when the broker went away.
    went_away = [n for n, b in known.items() if n not in live and b.alive]
    cluster.brokers.filter(node_id__in=went_away).update(alive=False)
    new_rows += [
        Broker(
            cluster=cluster,
            node_id=node_id,
            alive=False,
            first_seen=now,
            last_seen=None,
            replicas_count=replicas[node_id],
        )
        for node_id in sorted(referenced - live.keys() - known.keys())
    ]
    Broker.objects.bulk_create(new_rows)
    _rows_update(
        model=Broker,
        field_names=("replicas_count", "leaders_count"),
        rows=[
            ((b.pk,), (replicas[n], leaders[n]))
            for n, b in known.items()
            if (b.replicas_count, b.leaders_count) != (replicas[n], leaders[n])
        ],
    )
    for node_id in came_back:
        broker_state_changed.send(
            sender=Broker, cluster=cluster, node_id=node_id, alive=True, at=now
        )
    for node_id in went_away:
        broker_state_changed.send(
            sender=Broker, cluster=cluster, node_id=node_id, alive=False, at=now
        )


# The partition columns a sync writes, in the order _partition_values gives them.
_PARTITION_FIELDS = ("leader", "replicas", "isr", "offline", "under_replicated")
# Rows (or ids) per statement: well under SQLite's and PostgreSQL's parameter limits.
_CHUNK = 500


def _partition_values(p: PartitionState) -> tuple:
    return (p.leader, p.replicas, p.isr, p.leader is None, len(p.isr) < len(p.replicas))


def _partition_row(topic_id: int, p: PartitionState) -> tuple:
    """A new partition row as the database takes it (in _NEW_PARTITION_FIELDS' order):
    no model instance nor per-value preparation, 200k of them in a first round."""
    return (
        topic_id,
        p.index,
        p.leader,
        json.dumps(p.replicas),
        json.dumps(p.isr),
        p.leader is None,
        len(p.isr) < len(p.replicas),
    )


_NEW_PARTITION_FIELDS = ("topic", "index", *_PARTITION_FIELDS)


# Topic columns the sync writes: its digest and the counts of its partitions.
_TOPIC_FIELDS = (
    "internal",
    "placement_digest",
    "placement",
    "partitions_count",
    "replication_factor",
    "offline_count",
    "under_replicated_count",
)


def _topic_values(topic: TopicState, packed: bytes) -> tuple:
    parts = topic.partitions
    return (
        topic.internal,
        placement_hash(packed=packed),
        packed,
        len(parts),
        max((len(p.replicas) for p in parts), default=0),
        sum(p.leader is None for p in parts),
        sum(len(p.isr) < len(p.replicas) for p in parts),
    )


def placement_digest(*, partitions: list[PartitionState]) -> str:
    """A fingerprint of one topic's partitions as synced, so an unchanged topic is
    recognised from its Topic row alone, without reading its partitions."""
    return placement_hash(packed=placement_pack(partitions=partitions))


def _chunks(items: list, size: int = _CHUNK):
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _topics_apply(*, cluster: Cluster, state: ClusterState) -> list[int]:
    """Diff in memory against each topic's stored digest; only the topics whose digest
    changed have their partitions compared (against the packed placement stored on the
    topic) and written, in bulk. Returns the ids of the changed topics."""
    existing = {
        name: (pk, internal, digest)
        for pk, name, internal, digest in cluster.topics.values_list(
            "pk", "name", "internal", "placement_digest"
        )
    }
    seen_names = {t.name for t in state.topics} | set(state.unsettled_topics)
    gone = [pk for name, (pk, _, _) in existing.items() if name not in seen_names]
    for ids in _chunks(gone):
        Topic.objects.filter(pk__in=ids).delete()

    new_topics: list[tuple[TopicState, bytes]] = []
    changed: dict[int, tuple[TopicState, bytes]] = {}
    for topic_state in state.topics:
        packed = placement_pack(partitions=topic_state.partitions)
        known = existing.get(topic_state.name)
        if known is None:
            new_topics.append((topic_state, packed))
        elif known[1] != topic_state.internal or known[2] != placement_hash(packed=packed):
            changed[known[0]] = (topic_state, packed)

    created = Topic.objects.bulk_create(
        [
            Topic(
                cluster=cluster,
                name=t.name,
                **dict(zip(_TOPIC_FIELDS, _topic_values(t, packed), strict=True)),
            )
            for t, packed in new_topics
        ],
        batch_size=_CHUNK,
    )
    rows = []
    for topic, (topic_state, _) in zip(created, new_topics, strict=True):
        for p in topic_state.partitions:
            rows.append(_partition_row(topic.pk, p))
    if changed:
        trusted = {pk for _, (pk, _, digest) in existing.items() if digest and pk in changed}
        rows += _changed_partitions_apply(changed=changed, packed_ids=trusted)
        _rows_update(
            model=Topic,
            field_names=_TOPIC_FIELDS,
            rows=[((pk,), _topic_values(t, packed)) for pk, (t, packed) in changed.items()],
        )
    rows_insert(model=Partition, columns=_NEW_PARTITION_FIELDS, rows=rows)
    topic_placements_apply(
        topics=[
            (pk, ((p.leader, p.replicas) for p in s.partitions))
            for pk, s in [(t.pk, s) for t, (s, _) in zip(created, new_topics, strict=True)]
            + [(pk, s) for pk, (s, _) in changed.items()]
        ]
    )
    return list(changed)


def _log_dir_entries(described: BrokerLogDirs) -> tuple[list[dict], list[int]]:
    """(Broker.log_dirs, sorted by path; for each dir as Kafka listed it, its index there)."""
    order = sorted(range(len(described.dirs)), key=lambda i: described.dirs[i].path)
    used = described.used_bytes()
    entries = [
        {
            "path": described.dirs[i].path,
            "total": described.dirs[i].total_bytes,
            "usable": described.dirs[i].usable_bytes,
            "online": not described.dirs[i].error_code,
            "used": used[i],
        }
        for i in order
    ]
    position = [0] * len(order)
    for sorted_index, listed_index in enumerate(order):
        position[listed_index] = sorted_index
    return entries, position


# By cluster id, the replica layout (BrokerLogDirs.layout) of the answering brokers at
# this process's last committed sync of it: while it stays the same, a topic's replica
# dirs change only with its placement, and an unchanged cluster's are not packed again
# (hash() is per process, and so is this memo).
_layouts_seen: dict[int, int] = {}


def _log_dirs_apply(
    *,
    cluster: Cluster,
    state: ClusterState,
    log_dirs: Mapping[int, BrokerLogDirs],
    rewritten: list[int],
) -> None:
    """Each answering broker's log dirs, and the replica dirs of the topics that may
    have changed: every topic when a broker's layout changed, else those whose
    placement was rewritten (`rewritten`, ids) or whose replica dirs are not known."""
    entries_of, positions = {}, {}
    for broker_id, described in log_dirs.items():
        entries_of[broker_id], positions[broker_id] = _log_dir_entries(described)
    known = dict(cluster.brokers.values_list("node_id", "pk"))
    _rows_update(
        model=Broker,
        field_names=("log_dirs",),
        rows=[((known[b],), (entries,)) for b, entries in entries_of.items() if b in known],
    )
    layout = hash(tuple(sorted((b, d.layout()) for b, d in log_dirs.items())))
    same = _layouts_seen.pop(cluster.pk, None) == layout
    transaction.on_commit(lambda: _layouts_seen.__setitem__(cluster.pk, layout))
    ids = dict(cluster.topics.values_list("name", "pk"))
    if same:
        todo = set(rewritten) | set(
            cluster.topics.filter(replica_dirs__isnull=True).values_list("pk", flat=True)
        )
        if not todo:
            return
        stored: dict[str, bytes | None] = {}
    else:
        todo = set(ids.values())
        stored = dict(cluster.topics.values_list("name", "replica_dirs"))
    dirs: dict[int, Mapping[tuple[str, int], int]] = {}
    for broker_id, described in log_dirs.items():
        position = positions[broker_id]
        if position == sorted(position):  # listed in path order already: no remapping
            dirs[broker_id] = described.replica_dirs
        else:
            dirs[broker_id] = {k: position[i] for k, i in described.replica_dirs.items()}
    rows = []
    for topic in state.topics:
        pk = ids.get(topic.name)
        if pk not in todo:
            continue
        packed = replica_dirs_pack(topic=topic.name, partitions=topic.partitions, dirs=dirs)
        old = stored.get(topic.name)
        if old is None or bytes(old) != packed:
            rows.append(((pk,), (packed,)))
    _rows_update(model=Topic, field_names=("replica_dirs",), rows=rows)


def log_dirs_read(*, cluster: Cluster) -> tuple[dict[int, BrokerLogDirs] | None, str]:
    """(every live broker's log dirs, ""), or (None, why not): DescribeLogDirs through
    kafka-python. Called outside any transaction: it is a Kafka request."""
    from apps.kafka_layer.kafka_python_adapter import log_dirs_describe

    try:
        return log_dirs_describe(connection=cluster.connection), ""
    except Exception as exc:  # kafka-python raises many unrelated types
        logger.debug("DescribeLogDirs on %s failed: %s", cluster.name, exc)
        if authorization_denied(exc):
            return None, missing_acl_text(api="DescribeLogDirs")
        return None, f"log dirs unknown: {exc.__class__.__name__}: {exc}".rstrip(": ")


def _changed_partitions_apply(
    *, changed: dict[int, tuple[TopicState, bytes]], packed_ids: set[int]
) -> list[tuple]:
    """Update and delete the changed topics' partitions that differ from what was
    written, and return the ones to create. Where the topic's digest vouches for its
    packed placement, the two packed values are compared (no partition row read,
    nothing unpacked); else its partition rows are read."""
    to_create: list[tuple] = []
    to_update: list[tuple[tuple[int, int], tuple]] = []
    to_delete: list[tuple[tuple[int, int], tuple]] = []
    for ids in _chunks([pk for pk in changed if pk in packed_ids]):
        for topic_id, stored in Topic.objects.filter(pk__in=ids).values_list("pk", "placement"):
            topic_state, packed = changed[topic_id]
            diff = placement_diff(stored=stored, packed=packed)
            if diff.updated or diff.added:
                by_index = {p.index: p for p in topic_state.partitions}
                to_update += [((topic_id, i), _partition_values(by_index[i])) for i in diff.updated]
                to_create += [_partition_row(topic_id, by_index[i]) for i in diff.added]
            to_delete += [((topic_id, i), ()) for i in diff.removed]
    current: dict[tuple[int, int], tuple] = {}
    for ids in _chunks([pk for pk in changed if pk not in packed_ids]):
        for topic_id, index, *values in Partition.objects.filter(topic_id__in=ids).values_list(
            "topic_id", "index", "leader", "replicas", "isr"
        ):
            current[(topic_id, index)] = tuple(values)
        for topic_id in ids:
            for p in changed[topic_id][0].partitions:
                row = current.pop((topic_id, p.index), None)
                if row is None:
                    to_create.append(_partition_row(topic_id, p))
                elif row != (p.leader, list(p.replicas), list(p.isr)):
                    to_update.append(((topic_id, p.index), _partition_values(p)))
    to_delete += [(key, ()) for key in current]
    _partition_rows_by_key(sql_kind="delete", rows=to_delete)
    _partition_rows_by_key(sql_kind="update", rows=to_update)
    return to_create


def _partition_rows_by_key(*, sql_kind: str, rows: list[tuple[tuple[int, int], tuple]]) -> None:
    """Partition rows addressed by (topic id, index), the unique key, so the changed
    ones are written without reading their primary keys."""
    if not rows:
        return
    if sql_kind == "delete":
        qn = connection.ops.quote_name
        where = f"{qn('topic_id')} = %s AND {qn('index')} = %s"
        with connection.cursor() as cursor:
            cursor.executemany(
                f"DELETE FROM {qn(Partition._meta.db_table)} WHERE {where}",
                [key for key, _ in rows],
            )
        return
    _rows_update(
        model=Partition, key_fields=("topic", "index"), field_names=_PARTITION_FIELDS, rows=rows
    )


def _rows_update(
    *,
    model: type[models.Model],
    field_names: tuple[str, ...],
    rows: list[tuple[tuple, tuple]],
    key_fields: tuple[str, ...] | None = None,
) -> None:
    """(key, values) rows, the key a unique one (the primary key by default), written in
    bulk (bulk_write.rows_update): Django's bulk_update builds a CASE per column and
    row, far slower at thousands."""
    if not rows:
        return
    fields = [model._meta.get_field(name) for name in field_names]
    db = connections[DEFAULT_DB_ALIAS]  # not the proxy: once per field of every row
    rows_update(
        model=model,
        key_fields=key_fields or (model._meta.pk.name,),
        fields=field_names,
        rows=[
            (*key, *(f.get_db_prep_save(v, db) for f, v in zip(fields, values, strict=True)))
            for key, values in rows
        ],
    )


def cluster_sync_error_record(*, cluster: Cluster, error: str, now: datetime) -> None:
    """Keep the last known state; only say why this round failed."""
    was_reachable = cluster.reachable
    Cluster.objects.filter(pk=cluster.pk).update(last_sync_error=error, last_sync_error_at=now)
    cluster.last_sync_error, cluster.last_sync_error_at = error, now
    if was_reachable:
        cluster_reachability_changed.send(
            sender=Cluster, cluster=cluster, reachable=False, error=error, at=now
        )


def cluster_sync(*, cluster: Cluster, admin: AdminClient | None = None) -> SyncOutcome:
    """One sync round for one cluster: SYNCED; FAILED when the cluster could not be read
    (`last_sync_error` says why); SKIPPED when the previous round still runs (this one
    is then counted, not started). Only SYNCED is true."""
    with round_lease(cluster=cluster, kind=ClusterRound.SYNC) as lease:
        if lease is None:
            return SyncOutcome.SKIPPED
        if _cluster_sync_round(cluster=cluster, admin=admin, lease=lease):
            return SyncOutcome.SYNCED
        return SyncOutcome.FAILED


def _cluster_sync_round(
    *, cluster: Cluster, admin: AdminClient | None, lease: ClusterRound
) -> bool:
    was_reachable = cluster.reachable
    errors = ConnectionErrors() if admin is None else None
    try:
        admin = admin or admin_client_create(connection=cluster.connection, errors=errors)
        state = cluster_state_read(admin=admin)
    except ClusterNotAuthorized as exc:
        # Reachable, so no backoff; the message names the operation and resource. One
        # warning while the message stays the same, not one per round.
        log = logger.warning if cluster.last_sync_error != str(exc) else logger.debug
        log("cluster %s: %s", cluster.name, exc)
        cluster_sync_error_record(cluster=cluster, error=str(exc), now=timezone.now())
        return False
    except (SecretDecryptError, ClusterUnreachable) as exc:
        # SecretDecryptError: this cluster's secrets need a key we lack.
        error = str(exc) if isinstance(exc, SecretDecryptError) else f"unreachable: {exc}"
        if isinstance(exc, ClusterUnreachable) and errors is not None:
            # A wrong password or an unknown CA: say that, not "transport failure".
            error = errors.drained(admin) or error
        now = timezone.now()
        cluster_sync_error_record(cluster=cluster, error=error, now=now)
        cluster_backoff_fail(cluster=cluster, now=now)
        # One warning when it starts failing; the rounds after it only at DEBUG.
        log = logger.warning if was_reachable else logger.debug
        log("cluster %s: %s (next try in %s)", cluster.name, error, _until(cluster, now))
        return False
    log_dirs, degraded = log_dirs_read(cluster=cluster)
    if round_degraded_record(row=lease, degraded=degraded):
        log = logger.warning if degraded else logger.info
        log("cluster %s: %s", cluster.name, degraded or "log dirs read again")
    cluster_state_apply(cluster=cluster, state=state, now=timezone.now(), log_dirs=log_dirs)
    cluster_backoff_clear(cluster=cluster)
    if not was_reachable:
        logger.warning("cluster %s: reachable again", cluster.name)
    # Robust: a listener's failure (e.g. a Redis outage for live pages) can't fail a sync.
    cluster_synced.send_robust(sender=Cluster, cluster=cluster)
    return True


def _until(cluster: Cluster, now: datetime) -> str:
    seconds = (cluster.next_sync_at - now).total_seconds() if cluster.next_sync_at else 0
    return f"{seconds:.0f} s"


def cluster_register(*, name: str, bootstrap_servers: str) -> Cluster:
    """Create or update a cluster by name; an existing one keeps its security settings."""
    cluster, _ = Cluster.objects.update_or_create(
        name=name, defaults={"bootstrap_servers": bootstrap_servers}
    )
    return cluster
