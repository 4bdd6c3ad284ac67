"""The verifiers' field columns read each value as the replay itself would.

Times are read column-wise with numpy for the writers' usual shape; every other
shape goes to ``gotext.recorded_epoch``. Both must give ``recorded_epoch``'s answer
for every string, including the dates that are almost right.
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kgai_tui.core.store.decision_fields import (
    ZERO_TIME,
    Coded,
    FieldColumns,
    Joined,
    concat_fields,
    epoch_or_zero,
    epochs,
)


def _stamp(y: int, mo: int, d: int, h: int, mi: int, s: int) -> str:
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}Z"


# Near the writers' shape: every field a little out of range now and then.
NEAR = st.builds(
    _stamp,
    st.sampled_from([0, 1, 4, 100, 1600, 1900, 1970, 2000, 2024, 2026, 2100, 9999]),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 25),
    st.integers(0, 61),
    st.integers(0, 61),
)
ODD = st.sampled_from(
    [
        "",
        "2026-03-01",
        "2026-03-01T10:00:00",
        "2026-03-01T10:00:00z",
        "2026-03-01T10:00:00.5Z",
        "2026-03-01T10:00:00+02:00",
        "2026-03-01 10:00:00Z",
        "2026-03-01T10:00:00ZZ",
        "２０２６-03-01T10:00:00Z",
        "2026-03-01T1a:00:00Z",
        "0001-01-01T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2024-02-29T00:00:00Z",
        "lone \udc80",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(NEAR, ODD, st.text(max_size=22)), max_size=12))
@example(["1900-02-29T00:00:00Z", "2000-02-29T23:59:59Z", "0000-01-01T00:00:00Z"])
def test_times_read_column_wise_equal_the_replays_reading(values: list[str]) -> None:
    raw = [v.encode("utf-8", "surrogatepass") for v in values]
    assert epochs(raw).tolist() == [epoch_or_zero(v) for v in values]


def test_the_zero_time_and_no_time_read_alike() -> None:
    assert epochs([b"0001-01-01T00:00:00Z", b"", b"nope"]).tolist() == [ZERO_TIME] * 3


def _values(col: Joined) -> list[str] | None:
    if isinstance(col, Coded):
        return [col.table[c] for c in col.codes.tolist()]
    return col


def test_columns_pack_and_join_across_shards() -> None:
    plain, odd = FieldColumns(), FieldColumns()
    plain.rows.append((b"T", None, b"A", None, None, b"i1", b"2026-03-01T00:00:01Z"))
    plain.rows.append((None, None, None, None, None, b"i1", b"2026-03-01T00:00:02Z"))
    odd.add_obj(
        {
            "decision": {"title": "x", "rationale": "two\nlines", "summary": "é"},
            "install_id": "i2",
            "recorded_at": "2026-03-01T02:00:00+02:00",
        }
    )
    empty = FieldColumns()
    text, times = concat_fields([plain.pack(), empty.pack(), odd.pack()], [2, 0, 1])
    assert [_values(c) for c in text] == [
        ["T", "", "x"],
        ["", "", "two\nlines"],
        ["A", "", ""],
        None,  # refs: empty on every line
        ["", "", "é"],
        ["i1", "i1", "i2"],
    ]
    assert times.tolist() == [
        epoch_or_zero("2026-03-01T00:00:01Z"),
        epoch_or_zero("2026-03-01T00:00:02Z"),
        epoch_or_zero("2026-03-01T00:00:00Z"),
    ]


def test_a_column_empty_everywhere_comes_back_as_none() -> None:
    a, b = FieldColumns(), FieldColumns()
    a.rows.append((b"T", None, b"A", None, None, b"i", b""))
    a.rows.append((None, None, None, None, None, b"i", b""))
    b.rows.append((b"U", b"", b"A", None, b"s", b"j", b""))
    text, _ = concat_fields([a.pack(), FieldColumns().pack(), b.pack()], [2, 0, 1])
    assert [_values(c) for c in text] == [
        ["T", "", "U"],
        None,
        ["A", "", "A"],
        None,
        ["", "", "s"],
        ["i", "i", "j"],
    ]


def test_columns_of_many_values_travel_whole_and_join_with_coded_ones() -> None:
    many, few, odd = FieldColumns(), FieldColumns(), FieldColumns()
    for i in range(1500):
        many.rows.append((b"t%d" % i, None, b"A", None, None, b"i", b""))
    few.rows.append((b"t", None, b"B", None, None, b"j", b""))
    for i in range(1500):
        odd.add_obj(
            {
                "decision": {"title": f"line\n{i}", "author": "C"},
                "install_id": "k",
                "recorded_at": "",
            }
        )
    packs = [many.pack(), few.pack(), odd.pack()]
    assert isinstance(packs[0][0][0], bytes)  # the titles: too many to code
    assert isinstance(packs[2][0][0], list)  # a newline in them: sent as strs
    assert isinstance(packs[0][0][2], Coded)
    text, _ = concat_fields(packs, [1500, 1, 1500])
    titles, _, authors, _, _, installs = text
    assert titles == [f"t{i}" for i in range(1500)] + ["t"] + [
        f"line\n{i}" for i in range(1500)
    ]
    assert isinstance(authors, Coded) and authors.table == ["A", "B", "C"]
    assert _values(authors) == ["A"] * 1500 + ["B"] + ["C"] * 1500
    assert _values(installs) == ["i"] * 1500 + ["j"] + ["k"] * 1500
