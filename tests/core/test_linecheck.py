"""The open path's line check agrees with the exact Go decoder on every line.

``linecheck.check_line`` takes shortcuts on raw bytes (type tuples, one re-encode,
hashes on slices) because it runs a million times per cold open. Each shortcut is only
allowed to be faster, never to disagree: for canonical lines and for lines bent in the
ways writers and hand edits bend them, the verdict (parsed or refused, canonical, both
gates, the event itself) must equal :func:`codec.decode_line`'s.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from builders import decision, link, set_prop, upsert
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.codec import compute_hash, decode_line, event_obj, marshal_event
from kgai_tui.core.errors import LineError
from kgai_tui.core.ids import decision_id
from kgai_tui.core.linecheck import check_line
from kgai_tui.core.model import Decision, Event, Mutation

# Strings that stress each shortcut: empty, escapes, HTML-safe escapes, U+2028,
# non-ASCII, Go-only white space, control characters, a lone surrogate.
PLAIN = st.sampled_from(["plain", "Use X", " spaced  out ", "Z", "el_1"])
TRICKY = st.sampled_from(
    [
        "",
        "plain",
        'quote " and \\ backslash',
        "a<b>&c",
        "line\u2028sep",
        "naïve",
        "日本",
        "tab\there",
        "\x1cfile sep",
        "\x7fdel",
        "lone \udc80 surrogate",
    ]
)
PROP_KEYS = st.sampled_from(["owner", "paths", "tier", "", "a=b", "Z"])


def _mutation(text: st.SearchStrategy[str]) -> st.SearchStrategy[Mutation]:
    props = st.lists(st.tuples(PROP_KEYS, text), max_size=3).map(
        lambda kv: tuple(sorted(dict(kv).items()))
    )
    return st.one_of(
        st.builds(
            lambda n, p: replace(upsert("feature", n or "x"), props=p), text, props
        ),
        st.builds(lambda k, v: set_prop("feature", "x", k or "k", v), text, text),
        st.builds(
            lambda k: link("add_link", ("feature", "x"), ("service", "y"), k or "USES"),
            text,
        ),
        st.builds(lambda op: Mutation(op=op, element_id="el_1"), text),
    )


@st.composite
def events(draw: st.DrawFn) -> Event:
    """A well-formed event with correct gates (the writer's output)."""
    # Half the events hold only plain non-empty strings: the quick path's lines.
    text = PLAIN if draw(st.booleans()) else st.one_of(PLAIN, TRICKY)
    muts = draw(st.one_of(st.none(), st.lists(_mutation(text), max_size=4)))
    d: Decision | None = None
    if draw(st.booleans()):
        d = decision(
            draw(text),
            muts,
            rationale=draw(text),
            author=draw(text),
            summary=draw(text),
            supersedes=draw(st.lists(st.sampled_from(["d_a", "d_b", ""]), max_size=2)),
        )
        d = replace(d, refs=draw(text))
        d = replace(d, id=decision_id(d))
    parents = draw(st.sampled_from([None, (), ("sha256:" + "a" * 64,)]))
    ev = Event(
        hash="",
        op=draw(st.sampled_from(["assert", "", "retract"])),
        actor=draw(text),
        install_id="i1",
        lamport=draw(st.sampled_from([0, 1, 7, -3, 2**63 - 1, -(2**63)])),
        recorded_at="2026-03-01T00:00:00Z",
        parents=parents,
        decision=d,
    )
    return replace(ev, hash=compute_hash(ev))


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


# Byte edits that a hand edit, another encoder or a bug could make.
EDITS: list[tuple[bytes, bytes]] = [
    (b'"title":', b'"title": '),
    (b'"lamport":', b'"lamport":true,"x":'),
    (b'"title":"', b'"title":5,"t":"'),
    (b',"mutations":', b',"rationale":"","mutations":'),
    (b',"mutations":', b',"supersedes":[],"mutations":'),
    (b',"mutations":', b',"provenance_only":false,"mutations":'),
    (b'"op":"upsert_element"', b'"op":"upsert_element","kind":""'),
    (b'"props":{', b'"props":{"zz":"1",'),
    (b'"props":{', b'"props":{"owner":"dup",'),
    (b'"props":{', b'"props":{"n":1,'),
    (b"\\u003c", b"<"),
    (b"\\u003c", b"\\u003C"),
    (b"\\\\", b"\\/"),
    ("日".encode(), b"\\u65e5"),
    (b'"parents":null', b'"parents":[1]'),
    (b'"decision":{', b'"decision":{"Title":"x",'),
    (b'"id":"d_', b'"id":"D_'),
    (b'"hash":"sha256:', b'"hash":"sha256:0'),
]
_STRING = rb'"(?:[^"\\]|\\.)*"'
# Value swaps that keep every key where it is and change only its value's type or
# emptiness.
TYPE_SWAPS: list[tuple[bytes, bytes]] = [
    (rb'"title":' + _STRING, b'"title":5'),
    (rb'"author":' + _STRING, b'"author":null'),
    (rb'"kind":' + _STRING, b'"kind":7'),
    (rb'"name":' + _STRING, b'"name":["x"]'),
    (rb'"value":' + _STRING, b'"value":{"a":"b"}'),
    (rb'"op":' + _STRING + rb',"element_id"', b'"op":1,"element_id"'),
    (rb'"shapes":\[[^\]]*\]', b'"shapes":"el_1"'),
    (rb'"supersedes":\[[^\]]*\]', b'"supersedes":[1]'),
    (rb'"mutations":\[', b'"mutations":[5,'),
    (rb'"mutations":\[', b'"mutations":[["op"],'),
    (rb'"provenance_only":true', b'"provenance_only":1'),
    (rb'"actor":' + _STRING, b'"actor":false'),
    (rb'"lamport":-?[0-9]+', b'"lamport":1.5'),
    (rb'"lamport":-?[0-9]+', b'"lamport":true'),
    (rb'"props":\{' + _STRING + rb":" + _STRING, b'"props":{"a":1'),
    (rb'"provenance_only":true', b'"provenance_only":false'),
    # Fields Go omits when empty, present and empty at their place.
    (rb'"rationale":' + _STRING, b'"rationale":""'),
    (rb'"summary":' + _STRING, b'"summary":""'),
    (rb'"kind":' + _STRING, b'"kind":""'),
    (rb'"shapes":\[[^\]]*\]', b'"shapes":[]'),
    (rb'"props":\{[^}]*\}', b'"props":{}'),
]


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


def _plain_event(provenance_only: bool) -> Event:
    """An event with every field filled by plain text: the quick path's line."""
    muts = [
        replace(upsert("feature", "Invoice"), props=(("owner", "ops"), ("tier", "1"))),
        set_prop("feature", "Invoice", "paths", "src/x"),
        link("add_link", ("feature", "Invoice"), ("service", "Billing"), "USES"),
    ]
    d = decision(
        "Use X",
        muts,
        rationale="why",
        author="Alice",
        summary="s",
        provenance_only=provenance_only,
    )
    d = replace(d, refs="r", supersedes=("d_a",))
    d = replace(d, id=decision_id(d))
    ev = Event(
        hash="",
        op="assert",
        actor="alice",
        install_id="i1",
        lamport=3,
        recorded_at="2026-03-01T00:00:00Z",
        parents=("sha256:" + "a" * 64,),
        decision=d,
    )
    return replace(ev, hash=compute_hash(ev))


@pytest.mark.parametrize("provenance_only", [False, True])
@pytest.mark.parametrize(
    ("edit", "literal"), [(e, True) for e in EDITS] + [(e, False) for e in TYPE_SWAPS]
)
def test_every_edit_of_a_plain_line_agrees_with_the_exact_decoder(
    edit: tuple[bytes, bytes], literal: bool, provenance_only: bool
) -> None:
    raw = marshal_event(_plain_event(provenance_only))
    assert check_line(raw).canonical
    old, new = edit
    if literal:
        bent = raw.replace(old, new, 1)
    else:
        bent = re.sub(old, lambda _m: new, raw, count=1)
    _same_verdict(bent)
