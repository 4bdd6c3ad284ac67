"""A column of hashes held as raw bytes reads exactly as the list of its strings."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.store.hash_column import HashColumn

_HEX = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64).filter(
    lambda h: h != "0" * 64
)


def _column(hexes: list[str]) -> HashColumn:
    digits = np.frombuffer("".join(hexes).encode(), dtype=np.uint8).reshape(-1, 64)
    column = HashColumn.from_hex(digits)
    assert column is not None
    return column


@settings(max_examples=60, deadline=None)
@given(
    hexes=st.lists(_HEX, max_size=12),
    picks=st.lists(st.integers(min_value=-1, max_value=11), max_size=16),
    tail=st.lists(_HEX, max_size=3),
    probe=_HEX,
)
def test_a_hash_column_reads_as_its_list(
    hexes: list[str], picks: list[int], tail: list[str], probe: str
) -> None:
    # Picked by line, -1 for a decision with no event (the empty value): as the
    # cold open's fill takes each decision's hash from the lines' column.
    picks = [p for p in picks if p < len(hexes)]
    whole = ["sha256:" + h for h in hexes]
    expected = ["" if p < 0 else whole[p] for p in picks] + [
        "sha256:" + h for h in tail
    ]
    column = _column(hexes).take(np.array(picks, dtype=np.int64))
    for h in tail:
        column.append("sha256:" + h)

    assert len(column) == len(expected)
    assert list(column) == expected
    assert column == expected and column[:] == expected
    assert [column[i] for i in range(-len(expected), len(expected))] == expected * 2
    assert column[1:-1:2] == expected[1:-1:2]
    for lo in range(len(expected) + 1):  # the runs made from one hex() of the bytes
        assert column[lo:] == expected[lo:] and column[:lo] == expected[:lo]
    with pytest.raises(IndexError):
        column[len(expected)]
    for value in {*expected, "sha256:" + probe, "sha256:" + "0" * 64, "x", ""}:
        assert (value in column) == (value in expected), value
        for start in range(-2, len(expected) + 1, 2):
            for stop in (None, len(expected) - 1):
                try:
                    end = len(expected) if stop is None else stop
                    want: int | None = expected.index(value, start, end)
                except ValueError:
                    want = None
                try:
                    got: int | None = column.index(value, start, stop)
                except ValueError:
                    got = None
                assert got == want, (value, start, stop)
    joined = "\n".join(expected).encode()
    assert column.lines_digest() == hashlib.sha256(joined).digest()


def test_hashes_found_across_two_rows_are_not_matches() -> None:
    """A search of the bytes may match where two hashes meet; only a whole row is one."""
    a, b = "12" * 32, "34" * 32
    column = _column([a, b])
    straddle = "sha256:" + (a[32:] + b[:32])
    assert straddle not in column
    assert column.index("sha256:" + b) == 1


@pytest.mark.parametrize(
    "digits",
    ["A" * 64, "g" + "0" * 63, "0" * 64, " 1" * 32],
)
def test_digits_of_no_canonical_hash_are_refused(digits: str) -> None:
    """Upper case, not hex, zero, spaces: no verified event has such a hash, and
    the cold open then reads the shard exactly."""
    rows = np.frombuffer(digits.encode(), dtype=np.uint8).reshape(1, 64)
    assert HashColumn.from_hex(rows) is None


def test_joined_columns_read_one_after_another() -> None:
    first, second = _column(["ab" * 32]), _column(["cd" * 32, "ef" * 32])
    assert list(HashColumn.joined([first, second])) == [
        "sha256:" + "ab" * 32,
        "sha256:" + "cd" * 32,
        "sha256:" + "ef" * 32,
    ]
    first.append("sha256:" + "01" * 32)
    with pytest.raises(ValueError, match="appended"):
        HashColumn.joined([first, second])
