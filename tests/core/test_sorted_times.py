"""Sorted times read a block at a time from a blob answer as the whole array does."""

from __future__ import annotations

import sqlite3
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.model.sorted_times import InMemory, OnDisk, encode


def _stored(blob: bytes) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (b BLOB)")
    db.execute("INSERT INTO t VALUES (?)", (blob,))
    return db


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.integers(-(2**62), 2**62), max_size=60).map(sorted),
    block=st.integers(1, 7),
    extra=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5),
)
def test_every_cut_matches_the_whole_array(
    values: list[int], block: int, extra: list[int]
) -> None:
    whole = array("q", values)
    db = _stored(encode(whole, block))
    disk = OnDisk(db, "t", "b", 1)
    cuts = {c for v in values for c in (v - 1, v, v + 1)} | set(extra)
    for cut in sorted(cuts | {-(2**63), 2**63 - 1}):
        assert disk.upto(cut) == InMemory(whole).upto(cut), cut
    disk.close()


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"kgS1",
        array("q", [1, 2, 3]).tobytes(),  # an array stored whole (the old layout)
        encode(array("q", [1, 2, 3]))[:-1],
        b"kgS0" + encode(array("q", [1, 2, 3]))[4:],
        encode(array("q", [1, 2, 3])) + b"\0" * 8,
    ],
)
def test_a_blob_not_laid_out_as_written_is_refused(blob: bytes) -> None:
    db = _stored(blob)
    with pytest.raises(ModelCorruptError):
        OnDisk(db, "t", "b", 1)
