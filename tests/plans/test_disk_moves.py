"""Moves between the log dirs of one broker (JBOD), against the in-memory Kafka."""

import pytest

from apps.plans.executor.disk_moves import (
    DISK_THROTTLE_KEY,
    disk_moves_done,
    disk_moves_pick,
    disk_moves_send,
    disk_throttle_configs,
)

from .fakes import FakeKafka


def test_it_keeps_at_most_n_disk_moves_per_broker():
    pending = {("t", p, b): "/d/b" for p in range(4) for b in (1, 2)}
    picked = disk_moves_pick(pending=pending, busy={("t", 9, 1)}, per_broker=2)
    per_broker = {b: sum(1 for *_, x in picked if x == b) for b in (1, 2)}
    assert per_broker == {1: 1, 2: 2}


def test_it_moves_one_brokers_disks_at_a_time_broker_by_broker():
    pending = {("t", 0, 2): "/d/b", ("t", 1, 1): "/d/b", ("t", 2, 2): "/d/a"}
    first = disk_moves_pick(pending=pending, busy=set(), per_broker=5, broker_by_broker=True)
    assert {b for *_, b in first} == {2}
    # While broker 2 is busy nothing starts on broker 1.
    rest = {k: v for k, v in pending.items() if k not in first}
    assert disk_moves_pick(pending=rest, busy=set(first), per_broker=5, broker_by_broker=True) == {}
    assert disk_moves_pick(pending=rest, busy=set(), per_broker=5, broker_by_broker=True) == {
        ("t", 1, 1): "/d/b"
    }


def test_it_refuses_a_limit_below_one():
    with pytest.raises(ValueError, match="at least 1"):
        disk_moves_pick(pending={}, busy=set(), per_broker=0)


def test_it_resends_a_target_until_the_broker_hosts_the_replica():
    kafka = FakeKafka(assignment={("t", 0): [1, 2]}, ticks=2)
    kafka.replica_dirs = {("t", 0, 1): "/d/a", ("t", 0, 2): "/d/a"}
    targets = {("t", 0, 1): "/d/b", ("t", 0, 3): "/d/b"}

    retry, refused = disk_moves_send(kafka=kafka, targets=targets)
    assert retry == {("t", 0, 3)} and refused == {}

    # Broker 3 gets the replica (the reassignment), then the re-sent target is accepted.
    kafka.assignment[("t", 0)] = [1, 2, 3]
    kafka.replica_dirs[("t", 0, 3)] = "/d/a"
    retry, refused = disk_moves_send(kafka=kafka, targets={r: targets[r] for r in retry})
    assert retry == set() and refused == {}
    assert len(kafka.dir_alter_calls) == 2

    assert disk_moves_done(kafka=kafka, targets=targets) == set()
    assert disk_moves_done(kafka=kafka, targets=targets) == set(targets)


def test_it_sets_and_deletes_the_disk_throttle_per_busy_broker():
    assert disk_throttle_configs(brokers={2, 1}, rate=1000) == {
        1: {DISK_THROTTLE_KEY: "1000"},
        2: {DISK_THROTTLE_KEY: "1000"},
    }
    assert disk_throttle_configs(brokers={1}, rate=None) == {1: {DISK_THROTTLE_KEY: None}}
