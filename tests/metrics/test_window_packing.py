"""Packed partition loads and per-broker traffic read back as they were written."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.metrics.window_packing import (
    INT32_NULL,
    brokers_pack,
    brokers_unpack,
    loads_columns_unpack,
    loads_pack,
    loads_unpack,
)

_int32 = st.integers(min_value=INT32_NULL + 1, max_value=2**31 - 1)
_rate = st.none() | st.floats(allow_nan=False, allow_infinity=False)
_row = st.tuples(
    st.integers(min_value=0, max_value=100_000),
    st.integers(min_value=0, max_value=1000),
    st.none() | st.integers(min_value=-1, max_value=10_000),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=6),
    _rate,
    _rate,
    _rate,
    st.none() | st.integers(min_value=0, max_value=2**62),
    _rate,
    st.integers(min_value=0, max_value=500),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, max_size=40, unique_by=lambda r: r[0]))
def test_it_reads_back_every_partition_sorted_with_nulls_as_none(rows):
    assert loads_unpack(packed=loads_pack(rows=rows)) == sorted(rows, key=lambda r: r[0])


def test_it_reads_an_empty_value_as_no_partitions():
    assert loads_unpack(packed=b"") == []
    assert loads_unpack(packed=loads_pack(rows=[])) == []
    assert loads_columns_unpack(packed=b"")["bytes_in"] == []


def test_it_keeps_unmeasured_rates_apart_from_zero():
    rows = [
        (1, 1, None, [], None, 0.0, None, None, None, 0),
        (0, 6, 2, [2, 3], 1.5, 2.0, 0.0, 0, 9.0, 1),
    ]
    columns = loads_columns_unpack(packed=loads_pack(rows=rows))
    assert columns["partition"] == [0, 1]
    assert columns["bytes_in"] == [2.0, 0.0]
    assert columns["messages_in"] == [1.5, None]
    assert columns["size"] == [0, None]
    assert columns["leader"] == [2, None]
    assert columns["replicas"] == [[2, 3], []]


def test_it_stores_none_replicas_as_none_placed():
    row = (0, 1, None, None, None, None, None, None, None, 0)
    assert loads_unpack(packed=loads_pack(rows=[row]))[0][3] == []


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(_int32, st.floats(allow_nan=False), max_size=20),
    st.dictionaries(_int32, st.floats(allow_nan=False), max_size=20),
)
def test_it_reads_back_broker_traffic_with_missing_brokers_as_zero(into, out):
    got_in, got_out = brokers_unpack(packed=brokers_pack(into=into, out=out))
    brokers = set(into) | set(out)
    assert got_in == {b: into.get(b, 0.0) for b in brokers}
    assert got_out == {b: out.get(b, 0.0) for b in brokers}
    assert all(not math.isnan(v) for v in got_in.values())


def test_it_reads_no_broker_traffic_from_an_empty_value():
    assert brokers_unpack(packed=b"") == ({}, {})
