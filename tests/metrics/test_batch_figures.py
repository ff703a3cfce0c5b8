"""A run's figures worked out on the driver from its per-pane summary (no Spark)."""

from spark_jobs.partition_loads import batch_figures

W, S = 60_000, 10_000  # window and slide, ms


def pane(kp, start, lo, hi, *, rows=None, ts=None, malformed=(), late=()):
    return {
        "kafka_partition": kp,
        "window_start": start,
        "rows": rows if rows is not None else hi - lo + 1,
        "min_offset": lo,
        "max_offset": hi,
        "watermark": ts if ts is not None else (None if start is None else start + S - 1),
        "malformed_offsets": list(malformed),
        "late_groups": [{"max_offset": m, "rows": n} for m, n in late],
    }


def test_it_rewinds_each_partition_to_its_first_pane_a_window_still_needs():
    # Panes 0..50 s read; the newest sample (at 59.999 s) completes no 60 s window
    # yet beyond the 50 s boundary, so every pane is still needed.
    summary = [pane(0, s * S, s * 10, s * 10 + 9) for s in range(6)]
    summary += [pane(1, 0, 100, 109), pane(1, 50_000, 110, 119)]
    figures = batch_figures(summary, window_ms=W, slide_ms=S, previous_finalized_ms=None)
    assert figures.finalized_until_ms == 50_000
    assert figures.next_offsets == {0: 0, 1: 100}
    assert figures.oldest_pane_ms == 0
    assert figures.input_rows == 80


def test_it_reads_on_past_panes_whose_windows_are_all_written():
    # Complete up to 130 s: the pane at 60 s is last held by the window ending at
    # 120 s, done; the pane at 80 s also by the one ending at 140 s, still open.
    summary = [pane(0, 60_000, 0, 9), pane(0, 80_000, 10, 19), pane(0, 130_000, 20, 29)]
    figures = batch_figures(summary, window_ms=W, slide_ms=S, previous_finalized_ms=None)
    assert figures.finalized_until_ms == 130_000
    assert figures.next_offsets == {0: 10}


def test_it_counts_skipped_records_only_below_where_the_next_run_starts():
    summary = [
        pane(0, None, 0, 30, rows=2, malformed=(0, 30)),  # 30 is read again next run
        pane(0, 0, 1, 5, late=[(5, 5)]),  # every window holding it was written before
        pane(0, 120_000, 20, 29, ts=125_000),  # open: the next run starts at 20
    ]
    figures = batch_figures(summary, window_ms=W, slide_ms=S, previous_finalized_ms=60_000)
    assert figures.next_offsets == {0: 20}
    assert figures.malformed_rows == 1
    assert figures.late_rows == 5


def test_it_keeps_the_previous_boundary_for_a_batch_of_only_malformed_records():
    summary = [pane(2, None, 7, 8, rows=2, malformed=(7, 8))]
    figures = batch_figures(summary, window_ms=W, slide_ms=S, previous_finalized_ms=60_000)
    assert figures.finalized_until_ms == 60_000
    assert figures.oldest_pane_ms is None
    assert figures.next_offsets == {2: 9}
    assert figures.malformed_rows == 2
