"""bench/bench_load.py reads Locust's CSV files: per-request rows without the total,
and each failure with its count (none when Locust wrote no file)."""

from __future__ import annotations

from tests.support.bench import bench_module


def bench():
    return bench_module("bench_load")


def test_it_reads_the_rows_of_each_request_kind_but_not_the_total(tmp_path) -> None:
    stats = tmp_path / "locust_stats.csv"
    stats.write_text(
        "Type,Name,Request Count,Failure Count,50%,99%\n"
        "WS,connect,200,1,12,340\n"
        "GET,GET /api/clusters/,900,0,45,210\n"
        ",Aggregated,1100,1,40,300\n"
    )

    rows = bench().stats_read(stats)

    assert [(r["Type"], r["Name"], r["99%"]) for r in rows] == [
        ("WS", "connect", "340"),
        ("GET", "GET /api/clusters/", "210"),
    ]


def test_it_lists_each_failure_with_its_count(tmp_path) -> None:
    failures = tmp_path / "locust_failures.csv"
    failures.write_text('Method,Name,Error,Occurrences\nWS,connect,"Handshake status 400",3\n')
    module = bench()

    assert module.failures_read(failures) == ["3 x connect: Handshake status 400"]
    assert module.failures_read(tmp_path / "missing.csv") == []
