"""Recorded times are read with ASCII digits only, as Go's ``time.Parse`` reads them.

Python's ``\\d`` on text also matches every other Unicode decimal digit, so a hostile
line stamped ``٢٠٢٦-01-02T00:00:00Z`` was dated by us and undated by the reference:
as-of, diff, history order and the slider answered differently from ``kg``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from builders import ShardWriter, decision, upsert, write_store
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kgai_tui.core.gosem.gotext import (
    parse_rfc3339,
    recorded_epoch,
    rfc3339_epoch,
)
from kgai_tui.core.search.docs import NO_TIME, epoch_of
from kgai_tui.core.store.decision_fields import ZERO_TIME, epochs

#: Arabic-Indic, Devanagari and fullwidth digits in each part of a timestamp.
FOREIGN = [
    "٢٠٢٦-01-02T00:00:00Z",
    "2026-٠1-02T00:00:00Z",
    "2026-01-02T0٠:00:00Z",
    "2026-01-02T00:00:0٠Z",
    "2026-01-02T00:00:00.٥Z",
    "2026-01-02T00:00:00+0٢:00",
    "२०२६-01-02T00:00:00Z",
    "２０２６-01-02T00:00:00Z",
    "2026-01-0٢T00:00:00",  # the naive and the date-only shapes
    "2026-01-0٢",
]


@pytest.mark.parametrize("text", FOREIGN)
def test_a_time_with_other_digits_is_no_time(text: str) -> None:
    assert rfc3339_epoch(text) is None
    assert parse_rfc3339(text) is None
    assert recorded_epoch(text) is None
    assert epoch_of(text) == NO_TIME
    assert epochs([text.encode()]).tolist() == [ZERO_TIME]


def test_the_same_times_in_ascii_digits_still_parse() -> None:
    assert rfc3339_epoch("2026-01-02T00:00:00Z") == 1767312000
    assert recorded_epoch("2026-01-02T00:00:00") == 1767312000
    assert recorded_epoch("2026-01-02") == 1767312000
    assert epoch_of("2026-01-02T00:00:00Z") == 1767312000


def _run(root: Path, cache: Path, *args: str, model: str = "on") -> str:
    env = {"KGAI_TUI_CACHE_DIR": str(cache), "KGAI_TUI_READ_MODEL": model}
    done = subprocess.run(
        [sys.executable, "-m", "kgai_tui", *args, "--store", str(root), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return done.stdout


def test_as_of_leaves_out_a_decision_stamped_with_other_digits(tmp_path: Path) -> None:
    """The reference leaves the event out of every as-of cut (its time does not
    parse); the model, the whole store and a warm cache agree."""
    w = ShardWriter("i-one")
    w.add(
        decision("Keep A", [upsert("feature", "A")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    w.add(
        decision("Add B", [upsert("feature", "B")]),
        lamport=2,
        recorded_at="٢٠٢٦-01-02T00:00:00Z",
    )
    root = write_store(tmp_path / "store", {"i-one.ndjson": w.to_bytes()})
    answers = {
        (model, turn): _run(
            root, tmp_path / f"cache-{model}", "as-of", "2027-01-01", model=model
        )
        for model in ("on", "off")
        for turn in ("cold", "warm")
    }
    assert len(set(answers.values())) == 1, answers
    obj = json.loads(answers[("on", "cold")])
    assert obj["elements"] == ["A"]
    history = json.loads(_run(root, tmp_path / "cache-on", "history", "feature:B"))
    assert [d["when"] for d in history["decisions"]] == [""]


def _by_datetime(text: str) -> int | None:
    """An independent reading of the ``YYYY-MM-DDTHH:MM:SSZ`` shape: ASCII digits
    where digits go, then the calendar's own check."""
    from datetime import UTC

    digits = text[:4] + text[5:7] + text[8:10] + text[11:13] + text[14:16] + text[17:19]
    if (
        len(text) != 20
        or (text[4], text[7], text[10], text[13], text[16], text[19])
        != ("-", "-", "T", ":", ":", "Z")
        or not (digits.isascii() and digits.isdigit())
    ):
        return None
    try:
        when = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(when.timestamp())


_ALPHABET = "0123456789-T:Z+ z.\u0662"


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-02T24:00:00Z",
        "2026-01-02T23:60:00Z",
        "2026-01-02T23:59:60Z",
        "2026-02-29T00:00:00Z",
        "2024-02-29T23:59:59Z",
        "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-01-00T00:00:00Z",
        "2026/01/02T00:00:00Z",
        "1999-12-31T23:59:59Z",
    ],
)
def test_edge_stamps_read_as_the_calendar_says(text: str) -> None:
    """Twice: the second reading takes the date from the cache."""
    assert rfc3339_epoch(text) == _by_datetime(text)
    assert rfc3339_epoch(text) == _by_datetime(text)


@given(
    st.datetimes(
        min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)
    ),
    st.lists(st.tuples(st.integers(0, 19), st.sampled_from(_ALPHABET)), max_size=3),
)
@settings(max_examples=400, deadline=None)
def test_a_writers_stamp_reads_as_the_calendar_says(
    when: datetime, edits: list[tuple[int, str]]
) -> None:
    """The cached-date path every writer's stamp takes agrees with the calendar on
    valid stamps and on stamps with characters changed (an hour 24, a date 02-30,
    a foreign digit, a mark moved), and both readers agree with each other."""
    chars = list(when.strftime("%Y-%m-%dT%H:%M:%SZ"))
    for at, ch in edits:
        chars[at] = ch
    text = "".join(chars)
    assume(not text.startswith("0000"))  # Go's year 0: no datetime to compare with
    expected = _by_datetime(text)
    assert rfc3339_epoch(text) == expected
    assert recorded_epoch(text) == expected or expected is None
    if expected is not None:
        assert epochs([text.encode()]).tolist() == [expected]
