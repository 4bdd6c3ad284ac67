"""The open path's line check agrees with the exact Go decoder on every line.

``linecheck.check_line`` takes shortcuts on raw bytes (type tuples, one re-encode,
hashes on slices) because it runs a million times per cold open. Each shortcut is only
allowed to be faster, never to disagree: for canonical lines and for lines bent in the
ways writers and hand edits bend them, the verdict (parsed or refused, canonical, both
gates, the event itself) must equal :func:`codec.decode_line`'s.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from line_cases import EDITS, TYPE_SWAPS, events, plain_event

from kgai_tui.core.errors import LineError
from kgai_tui.core.wire.codec import decode_line, event_obj, marshal_event
from kgai_tui.core.wire.linecheck import check_line
from kgai_tui.core.wire.model import Event


def _same_verdict(raw: bytes) -> None:
    try:
        exact = decode_line(raw)
    except LineError:
        with pytest.raises(LineError):
            check_line(raw)
        return
    fast = check_line(raw)
    assert fast.obj == event_obj(exact.event)
    assert fast.hash_ok == exact.hash_ok
    assert fast.decision_id_ok == exact.decision_id_ok
    assert fast.canonical == (marshal_event(exact.event) == raw)


@settings(max_examples=300, deadline=None)
@given(events())
def test_canonical_lines_agree_with_the_exact_decoder(ev: Event) -> None:
    raw = marshal_event(ev)
    _same_verdict(raw)
    checked = check_line(raw)
    assert checked.canonical and checked.hash_ok and checked.decision_id_ok


@settings(max_examples=300, deadline=None)
@given(events(), st.sampled_from(EDITS))
def test_bent_lines_agree_with_the_exact_decoder(
    ev: Event, edit: tuple[bytes, bytes]
) -> None:
    raw = marshal_event(ev)
    old, new = edit
    if old in raw:
        _same_verdict(raw.replace(old, new, 1))


@settings(max_examples=300, deadline=None)
@given(events(), st.sampled_from(TYPE_SWAPS))
def test_lines_with_a_wrong_type_agree_with_the_exact_decoder(
    ev: Event, swap: tuple[bytes, bytes]
) -> None:
    pattern, new = swap
    raw = marshal_event(ev)
    bent = re.sub(pattern, lambda _m: new, raw, count=1)
    if bent != raw:
        _same_verdict(bent)


@pytest.mark.parametrize(
    "raw",
    [
        b"{}",
        b"null",
        b'{"hash":"x"}',
        b'{"hash":"sha256:00","op":"assert","actor":"a","install_id":"i",'
        b'"lamport":9223372036854775808,"recorded_at":"","parents":null,"decision":null}',
    ],
)
def test_odd_lines_agree_with_the_exact_decoder(raw: bytes) -> None:
    _same_verdict(raw)


def test_the_reference_vectors_agree_with_the_exact_decoder() -> None:
    lines = (Path(__file__).parent / "spec_vectors.ndjson").read_bytes().splitlines()
    assert lines
    for raw in lines:
        _same_verdict(raw)
        assert check_line(raw).canonical


@pytest.mark.parametrize("provenance_only", [False, True])
@pytest.mark.parametrize(
    ("edit", "literal"), [(e, True) for e in EDITS] + [(e, False) for e in TYPE_SWAPS]
)
def test_every_edit_of_a_plain_line_agrees_with_the_exact_decoder(
    edit: tuple[bytes, bytes], literal: bool, provenance_only: bool
) -> None:
    raw = marshal_event(plain_event(provenance_only))
    assert check_line(raw).canonical
    old, new = edit
    if literal:
        bent = raw.replace(old, new, 1)
    else:
        bent = re.sub(old, lambda _m: new, raw, count=1)
    _same_verdict(bent)
