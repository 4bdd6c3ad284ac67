"""Lines for the line checks' tests: writer output, and the ways lines get bent.

Shared by the tests that hold the open path's shortcuts (``linecheck``,
``plain_line``) to the exact Go decoder.
"""

from __future__ import annotations

from dataclasses import replace

from builders import decision, link, set_prop, upsert
from hypothesis import strategies as st

from kgai_tui.core.wire.codec import compute_hash, decision_id
from kgai_tui.core.wire.model import Decision, Event, Mutation

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
    # Keys out of Go's struct order, at each level.
    (b'"kind":"feature","name":"Invoice"', b'"name":"Invoice","kind":"feature"'),
    (b'"actor":"alice","install_id":"i1"', b'"install_id":"i1","actor":"alice"'),
    (b'"rationale":"why","author":"Alice"', b'"author":"Alice","rationale":"why"'),
    (b'"link_kind":', b'"name":"late","link_kind":'),
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


def plain_event(provenance_only: bool) -> Event:
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
