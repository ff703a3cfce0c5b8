"""Which directories of a stopped broker's log dir go before it starts (no JVM)."""

from __future__ import annotations

from pathlib import Path

from dev_cluster.strays import stray_dirs, stray_dirs_remove


def data_dir(tmp_path: Path, *names: str) -> Path:
    data = tmp_path / "data"
    for name in names:
        (data / name).mkdir(parents=True)
        (data / name / "00000000000000000000.log").write_bytes(b"x" * 1000)
    (data / "meta.properties").write_text("node.id=3\n")
    return data


def test_it_finds_the_stray_and_unassigned_replicas_and_keeps_the_rest(tmp_path: Path) -> None:
    data = data_dir(
        tmp_path,
        "orders-0",  # still on broker 3
        "orders-1",  # moved to 1 and 2 while broker 3 was down
        "gone-0",  # topic deleted while broker 3 was down
        "orders-2.5b1a0e0f3d6c4c5d9a8b7c6d5e4f3a2b-stray",  # Kafka's own verdict, earlier
        "orders-3.5b1a0e0f3d6c4c5d9a8b7c6d5e4f3a2b-delete",  # Kafka deletes these itself
        "__cluster_metadata-0",
        "__consumer_offsets-7",
    )
    assignment = {"orders": {0: [3, 1], 1: [1, 2], 2: [1, 2]}, "__consumer_offsets": {7: [2, 3]}}

    found = stray_dirs(data, broker_id=3, assignment=assignment)

    assert [p.name for p in found] == [
        "gone-0",
        "orders-1",
        "orders-2.5b1a0e0f3d6c4c5d9a8b7c6d5e4f3a2b-stray",
    ]
    # No metadata (nothing answered): only what Kafka itself already marked stray.
    assert [p.name for p in stray_dirs(data, broker_id=3, assignment=None)] == [
        "orders-2.5b1a0e0f3d6c4c5d9a8b7c6d5e4f3a2b-stray"
    ]
    assert stray_dirs_remove(data, broker_id=3, assignment=assignment) == 3000
    assert sorted(p.name for p in data.iterdir()) == [
        "__cluster_metadata-0",
        "__consumer_offsets-7",
        "meta.properties",
        "orders-0",
        "orders-3.5b1a0e0f3d6c4c5d9a8b7c6d5e4f3a2b-delete",
    ]
