"""The cold open's one-pattern line check never disagrees with the exact path.

``plain_line.verify_plain`` answers only "plain, canonical, both gates pass" (with the
lamport and first parent) or "ask the exact path". These tests hold that answer to
``linecheck.check_line`` (itself held to Go's decoder) on writer output and on bent
lines, and hold a whole shard scan with the fast path to the same scan without it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from line_cases import EDITS, TYPE_SWAPS, events, plain_event

from benchmarks.genlog import GenParams, generate
from kgai_tui.core.errors import LineError
from kgai_tui.core.store import logscan
from kgai_tui.core.store.logscan import ShardScan, scan_bytes
from kgai_tui.core.wire.codec import marshal_event
from kgai_tui.core.wire.linecheck import check_line
from kgai_tui.core.wire.model import Event
from kgai_tui.core.wire.plain_line import _PLAIN_BYTES, verify_plain


def _exact(raw: bytes) -> tuple[int, bytes | None] | None:
    """What verify_plain must answer, from the exact path's verdict."""
    try:
        checked = check_line(raw)
    except LineError:
        return None
    if not (checked.canonical and checked.hash_ok and checked.decision_id_ok):
        return None
    parents = checked.obj["parents"]
    return checked.obj["lamport"], parents[0].encode() if parents else None


def _agrees(raw: bytes) -> tuple[int, bytes | None] | None:
    verified = verify_plain(raw)
    fast = None if verified is None else (verified[0], verified[1]["parent"])
    if fast is not None:
        assert fast == _exact(raw)
        assert raw[9:80].decode() == check_line(raw).event_hash
    return fast


def _is_plain(raw: bytes) -> bool:
    return not raw.translate(None, _PLAIN_BYTES)


@settings(max_examples=300, deadline=None)
@given(events())
def test_writer_lines_agree_and_plain_ones_take_the_fast_path(ev: Event) -> None:
    raw = marshal_event(ev)
    fast = _agrees(raw)
    # Completeness: a plain canonical line that passes must not be left to the slow
    # path, or the open would silently fall back to the slow speed.
    if _is_plain(raw):
        assert fast is not None


@settings(max_examples=300, deadline=None)
@given(events(), st.sampled_from(EDITS))
def test_bent_lines_agree(ev: Event, edit: tuple[bytes, bytes]) -> None:
    raw = marshal_event(ev)
    old, new = edit
    if old in raw:
        _agrees(raw.replace(old, new, 1))
        _agrees(_regated(raw.replace(old, new, 1)))


@settings(max_examples=300, deadline=None)
@given(events(), st.sampled_from(TYPE_SWAPS))
def test_lines_with_a_wrong_type_agree(ev: Event, swap: tuple[bytes, bytes]) -> None:
    pattern, new = swap
    raw = marshal_event(ev)
    bent = re.sub(pattern, lambda _m: new, raw, count=1)
    if bent != raw:
        _agrees(bent)
        _agrees(_regated(bent))


@pytest.mark.parametrize("provenance_only", [False, True])
@pytest.mark.parametrize(
    ("edit", "literal"), [(e, True) for e in EDITS] + [(e, False) for e in TYPE_SWAPS]
)
def test_every_edit_of_a_plain_line_agrees(
    edit: tuple[bytes, bytes], literal: bool, provenance_only: bool
) -> None:
    raw = marshal_event(plain_event(provenance_only))
    assert verify_plain(raw) is not None
    old, new = edit
    bent = raw.replace(old, new, 1) if literal else re.sub(old, lambda _m: new, raw)
    _agrees(bent)
    _agrees(_regated(bent))


def test_a_regated_plain_line_passes() -> None:
    raw = marshal_event(plain_event(False))
    assert _regated(raw) == raw
    bent = _regated(raw.replace(b'"title":"Use X"', b'"title":"Use  Y"'))
    assert verify_plain(bent) is not None
    assert _exact(bent) is not None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b'"title":"Use X"', b'"title":"Use Y"'),  # content changed: both hashes fail
        (b'"lamport":3', b'"lamport":4'),  # the event hash fails
        (b'"actor":"alice"', b'"actor":"alicf"'),
        (b'"props":{"owner":"ops","tier":"1"}', b'"props":{"tier":"1","owner":"ops"}'),
        (b'"props":{"owner":"ops","tier":"1"}', b'"props":{"owner":"ops","owner":"1"}'),
        (b"}}", b"} }"),
        (b'{"hash"', b' {"hash"'),
    ],
)
def test_a_failing_or_unusual_plain_line_is_left_to_the_exact_path(
    old: bytes, new: bytes
) -> None:
    raw = marshal_event(plain_event(False))
    assert old in raw
    assert verify_plain(raw.replace(old, new, 1)) is None


def _rehashed(raw: bytes) -> bytes:
    """The line with its event hash made right for its bytes."""
    digest = hashlib.sha256(b'{"hash":"' + raw[80:]).hexdigest().encode()
    return raw[:16] + digest + raw[80:]


_DEC_ID = re.compile(rb'"decision":\{"id":"d_[0-9a-f]{24}"')


def _regated(raw: bytes) -> bytes:
    """A bent plain line with both gates made right again, so only its shape is off.

    Without this, an edit fails the hash first and the shape checks are never
    reached. Spec 2.5's decision id over plain ASCII: lower-cased, single-spaced
    title and author, the rationale, and the raw mutations bytes.
    """
    try:
        obj = orjson.loads(raw)
        dec = obj["decision"]
        title, author = dec["title"], dec.get("author", "")
        rationale = dec.get("rationale", "")
        start = raw.index(b',"mutations":') + len(b',"mutations":')
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError):
        return _rehashed(raw) if raw[:16] == b'{"hash":"sha256:' else raw
    if not all(type(v) is str for v in (title, author, rationale)):
        return _rehashed(raw)
    tail = raw.rfind(b',"provenance_only":')
    stop = tail if tail > start else len(raw) - 2
    head = "\x00".join(
        (" ".join(title.lower().split()), rationale, " ".join(author.lower().split()))
    )
    digest = hashlib.sha256(head.encode() + b"\x00" + raw[start:stop]).hexdigest()
    fixed = _DEC_ID.sub(
        lambda _m: b'"decision":{"id":"d_' + digest[:24].encode() + b'"', raw, count=1
    )
    return _rehashed(fixed)


@pytest.mark.parametrize(
    ("lamport", "fast"),
    [
        (b"9223372036854775807", True),
        (b"-9223372036854775808", True),
        (b"9223372036854775808", False),
        (b"-9223372036854775809", False),
        (b"99999999999999999999", False),
        (b"03", False),
        (b"-0", False),
    ],
)
def test_a_lamport_outside_int64_or_not_canonical_is_left_to_the_exact_path(
    lamport: bytes, fast: bool
) -> None:
    raw = _rehashed(
        marshal_event(plain_event(False)).replace(
            b'"lamport":3', b'"lamport":' + lamport
        )
    )
    assert (verify_plain(raw) is not None) is fast
    _agrees(raw)


def _slow_scan(monkeypatch: pytest.MonkeyPatch, data: bytes, **kw: object) -> ShardScan:
    with monkeypatch.context() as m:
        m.setattr(logscan, "verify_plain_at", lambda data, start, end: None)
        return scan_bytes("i1.ndjson", data, **kw)  # type: ignore[arg-type]


def _shard(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(events(), min_size=1, max_size=6),
    st.lists(st.sampled_from([*EDITS, (b"", b"")]), min_size=6, max_size=6),
    st.sampled_from([b"", b"   \n", b'{"hash":"sha256:torn']),
    st.booleans(),
)
def test_a_shard_scan_with_the_fast_path_equals_the_exact_scan(
    evs: list[Event],
    edits: list[tuple[bytes, bytes]],
    tail: bytes,
    chained: bool,
) -> None:
    lines = []
    for ev, (old, new) in zip(evs, edits, strict=False):
        raw = marshal_event(ev)
        lines.append(raw.replace(old, new, 1) if old else raw)
    lines.insert(len(lines) // 2, b"")  # a blank line
    lines.append(b"  " + marshal_event(evs[0]) + b"\r")  # Go's white space around
    data = _shard(lines) + tail
    kw: dict[str, object] = {}
    if chained:
        kw = {"start": 10, "prev_hash": "sha256:" + "a" * 64}
    with pytest.MonkeyPatch.context() as mp:
        slow = _slow_scan(mp, data, **kw)
    fast = scan_bytes("i1.ndjson", data, **kw)  # type: ignore[arg-type]
    assert asdict(fast) == asdict(slow)


def test_every_line_of_a_generated_store_takes_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = list(generate(GenParams(total=300, installs=3, elems=40)))
    assert all(verify_plain(raw) is not None for _, raw in made)
    data = _shard([raw for writer, raw in made if writer == 0])
    fast = scan_bytes("i1.ndjson", data)
    assert not fast.chain_breaks and len(fast) > 50
    assert asdict(fast) == asdict(_slow_scan(monkeypatch, data))


def test_the_reference_vectors_agree() -> None:
    lines = (Path(__file__).parent / "spec_vectors.ndjson").read_bytes().splitlines()
    assert lines
    for raw in lines:
        _agrees(raw)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [b"\n", b"a", b"{", b'"', b"\\", b"\x00", b"\xc3\xa9", b"\xff"]
        ),
        max_size=60,
    ).map(b"".join)
)
def test_lines_split_in_python_as_with_numpy(data: bytes) -> None:
    """A write's small appended tail is split in plain Python (no NumPy import), a
    cold open's whole shard with NumPy: the same line ends and the same odd lines."""
    assert logscan.line_ends(data, vector=False) == logscan.line_ends(data, vector=True)


def test_a_shard_scans_the_same_on_both_sides_of_the_vector_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = generate(GenParams(total=40, installs=1, elems=10))
    data = _shard([raw for _, raw in made]) + b"\xff torn"
    plain = scan_bytes("i1.ndjson", data)
    assert len(plain) == 40 and plain.problems
    monkeypatch.setattr(logscan, "VECTOR_BYTES", 0)
    assert asdict(scan_bytes("i1.ndjson", data)) == asdict(plain)
