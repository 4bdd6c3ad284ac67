"""The ingest input, decision building and the 2.9 reference lines (spec 2.9, 5.1-5.6)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gojson import marshal
from kgai_tui.core.gosem.gotext import go_quote
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.config_file import StoreConfig, save_config
from kgai_tui.core.wire.codec import (
    compute_hash,
    decision_id,
    decode_line,
    marshal_event,
    mutation_obj,
)
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.wire.model import Decision, Event
from kgai_tui.core.write.ingest import BuiltDecision, build_decision
from kgai_tui.core.write.ingest_input import (
    UNKNOWN_FIELD_HINT,
    DecisionInput,
    parse_ingest,
)
from kgai_tui.core.write.writes import init_store, record

VECTORS = [
    line
    for line in (Path(__file__).parent / "spec_vectors.ndjson")
    .read_bytes()
    .split(b"\n")
    if line
]


def _one(doc: object) -> DecisionInput:
    return parse_ingest(json.dumps(doc))[0]


# ------------------------------------------------------------------ input (5.1)


def test_flexstring_keeps_number_literal_text() -> None:
    """Props and value keep a number's literal text; bools and null become text."""
    raw = (
        '{"decision":{"title":"t","mutations":[{"op":"upsert_element","name":"X",'
        '"props":{"a":3,"b":3.0,"c":1e5,"d":-0,"e":true,"f":null,"g":"s"}},'
        '{"op":"set_prop","element":"X","key":"k","value":1E+05}]}}'
    )
    (d,) = parse_ingest(raw)
    assert dict(d.mutations[0].props) == {
        "a": "3",
        "b": "3.0",
        "c": "1e5",
        "d": "-0",
        "e": "true",
        "f": "",
        "g": "s",
    }
    assert d.mutations[1].value == "1E+05"


def test_keys_match_case_insensitively_and_last_wins() -> None:
    """``Title`` fills title, and of two keys for one field the last one wins."""
    (d,) = parse_ingest('{"DECISION":{"Title":"a","title":"b","RATIONALE":"r"}}')
    assert (d.title, d.rationale) == ("b", "r")


def test_unknown_field_lists_the_valid_fields() -> None:
    """An unknown field at any level fails with Go's error plus the field list."""
    with pytest.raises(UsageError) as top:
        parse_ingest('{"title":"x"}')
    assert str(top.value) == (
        'invalid ingest JSON: json: unknown field "title"' + UNKNOWN_FIELD_HINT
    )
    with pytest.raises(UsageError) as nested:
        parse_ingest('{"decision":{"title":"x","mutations":[{"op":"x","elemnt":"y"}]}}')
    assert str(nested.value).startswith(
        'invalid ingest JSON: json: unknown field "elemnt" — valid decision fields'
    )


def test_type_errors_and_non_scalars_are_refused() -> None:
    """A number title and an object prop value are input errors, in one line."""
    with pytest.raises(UsageError, match="cannot unmarshal number into Go struct"):
        parse_ingest('{"decision":{"title":5}}')
    with pytest.raises(UsageError, match=r"must be a scalar .* got object"):
        parse_ingest(
            '{"decision":{"title":"t","mutations":[{"op":"upsert_element",'
            '"name":"X","props":{"a":{}}}]}}'
        )


def test_empty_truncated_and_trailing_input() -> None:
    """EOF and a cut document are errors; bytes after the first value are ignored."""
    with pytest.raises(UsageError, match=r"^invalid ingest JSON: EOF$"):
        parse_ingest(b"  \n")
    with pytest.raises(UsageError, match="unexpected EOF"):
        parse_ingest('{"decision":{"title":"x"')
    with pytest.raises(UsageError, match="'b' looking for beginning of object key"):
        parse_ingest("{bad}")
    with pytest.raises(UsageError, match="',' looking for beginning of value"):
        parse_ingest("[,]")
    with pytest.raises(UsageError, match=r'^empty ingest: provide a "decision"'):
        parse_ingest('{"decision":null,"decisions":[]}')
    assert [d.title for d in parse_ingest('{"decision":{"title":"x"}} trailing')] == [
        "x"
    ]


def test_decision_then_decisions_in_order() -> None:
    """``decision`` comes first, then ``decisions[]`` in order."""
    docs = parse_ingest(
        '{"decisions":[{"title":"b"},{"title":"c"}],"decision":{"title":"a"}}'
    )
    assert [d.title for d in docs] == ["a", "b", "c"]


def test_invalid_utf8_and_lone_surrogates_become_replacement_chars() -> None:
    """Go decodes a bad byte and a lone surrogate escape to U+FFFD."""
    (d,) = parse_ingest(b'{"decision":{"title":"a\xffb \\ud800"}}')
    assert d.title == "a\ufffdb \ufffd"


# ------------------------------------------------------------------ build (5.2-5.6)


def _build(
    doc: object, p: Projection | None = None, actor: str = "alice"
) -> BuiltDecision:
    return build_decision(_one(doc), p or Projection(), actor)


def test_reference_resolution_examples() -> None:
    """``feature:a:b``, ``:x`` and ``http://x`` resolve as spec 5.2 lists."""
    built = _build(
        {
            "decision": {
                "title": "t",
                "supersedes_on": ["feature:a:b", ":x", "http://x", " "],
            }
        }
    )
    assert built.elements == {
        "a:b": element_id("feature", "a:b"),
        ":x": element_id("concept", ":x"),
        "//x": element_id("http", "//x"),
    }


def test_links_add_implicit_upserts_and_upper_case_go_style() -> None:
    """A link upserts both ends (from first), upper-cases like Go and targets from."""
    built = _build(
        {
            "decision": {
                "title": "t",
                "mutations": [
                    {"op": "add_link", "from": "svc:A", "to": "B", "link": "straße"},
                    {"op": "upsert_element", "kind": "svc", "name": "A"},
                ],
            }
        }
    )
    d = built.decision
    assert d.mutations is not None
    a, b = element_id("svc", "A"), element_id("concept", "B")
    assert [(m.op, m.element_id) for m in d.mutations] == [
        ("upsert_element", a),
        ("upsert_element", b),
        ("add_link", a),
        ("upsert_element", a),  # an explicit upsert after an implicit one is kept
    ]
    assert d.mutations[2].link_kind == "STRAßE"
    assert d.targets == (a,)
    assert d.shapes == tuple(sorted((a, b)))
    assert d.summary == "link svc:A-straße->B; element A"


def test_bare_upsert_of_existing_element_is_provenance_only() -> None:
    """Upserting an existing element without props gives no authority (no phantom)."""
    p = Projection()
    first = _build(
        {
            "decision": {
                "title": "a",
                "mutations": [{"op": "upsert_element", "name": "X"}],
            }
        }
    )
    assert first.decision.targets == (element_id("concept", "X"),)
    _apply(p, first.decision)
    again = _build(
        {
            "decision": {
                "title": "b",
                "mutations": [{"op": "upsert_element", "name": "X"}],
            }
        },
        p,
    )
    d = again.decision
    assert d.targets == () and d.provenance_only and d.supersedes == ()


def _apply(p: Projection, d: Decision, lamport: int = 1) -> None:
    ev = Event("", "assert", "a", "i", lamport, "2026-01-01T00:00:00Z", None, d)
    p.apply(replace(ev, hash=compute_hash(ev)))


def test_supersedes_collects_current_heads_of_every_target() -> None:
    """A decision with authority supersedes what is in force on its targets."""
    p = Projection()
    a = _build({"decision": {"title": "a", "supersedes_on": ["X"]}}).decision
    b = _build({"decision": {"title": "b", "supersedes_on": ["Y"]}}).decision
    _apply(p, a, 1)
    _apply(p, b, 2)
    c = _build(
        {
            "decision": {
                "title": "c",
                "mutations": [
                    {"op": "set_prop", "element": "X", "key": "k", "value": 1}
                ],
                "supersedes_on": ["Y"],
            }
        },
        p,
    ).decision
    assert c.supersedes == tuple(sorted((a.id, b.id)))


def test_author_defaults_to_actor_and_refs_join() -> None:
    """A blank author is the config actor; refs join as ``system:url``."""
    d = _build(
        {
            "decision": {
                "title": "t",
                "author": "  ",
                "refs": [
                    {"system": "gh", "url": "u1"},
                    {"system": "jira", "url": "K-1"},
                ],
            }
        },
        actor="carol",
    ).decision
    assert d.author == "carol" and d.refs == "gh:u1 jira:K-1"
    assert d.mutations is None and d.provenance_only


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        ({"op": "frobnicate"}, 'unknown mutation op "frobnicate"'),
        ({"op": "upsert_element", "name": " "}, 'upsert_element missing "name"'),
        ({"op": "set_prop", "key": "k"}, 'set_prop missing "element"'),
        (
            {"op": "add_link", "from": "a", "to": "b"},
            "add_link requires from, to and link",
        ),
    ],
)
def test_bad_mutations_are_refused(mutation: dict[str, str], message: str) -> None:
    """Each malformed mutation gives the reference's message."""
    with pytest.raises(UsageError, match=f"^{message}$"):
        _build({"decision": {"title": "t", "mutations": [mutation]}})


def test_blank_title_and_no_shape_warning() -> None:
    """A blank title is refused; a decision shaping nothing gets the %q warning."""
    with pytest.raises(UsageError, match=r'^decision missing required "title"$'):
        _build({"decision": {"title": " \t"}})
    built = _build({"decision": {"title": 'say "hi"\n'}})
    assert built.warnings == [
        'decision "say \\"hi\\"\\n" shapes no element — kg context/history recall '
        "works per element, so attach one (a single upsert_element mutation is enough)"
    ]


def test_go_quote_matches_strconv_quote() -> None:
    """``%q`` escapes controls, quotes and non-printables; printable Unicode stays."""
    assert go_quote('a"\\\n\t\x01\x7fé\u00a0😀\u2028') == (
        '"a\\"\\\\\\n\\t\\x01\\x7fé\\u00a0😀\\u2028"'
    )


# ------------------------------------------------------------------ 2.9 vectors


def _vector_store(tmp_path: Path, install_id: str) -> Path:
    root = tmp_path / "store"
    init_store(root, actor="alice")
    save_config(root, StoreConfig(install_id=install_id, actor="alice"))
    return root


VECTOR1_INPUT = {
    "decision": {
        "title": "Invoice renders standalone",
        "rationale": 'Invoice is its own domain <not> & "Pricing"',
        "refs": [{"system": "clickup", "url": "https://x/CU-1"}],
        "mutations": [
            {
                "op": "upsert_element",
                "kind": "feature",
                "name": "Invoice",
                "props": {"b": 2, "a": 1, "paths": "src/billing/*"},
            },
            {
                "op": "retire_link",
                "from": "feature:Invoice",
                "to": "feature:Pricing",
                "link": "PART_OF",
            },
        ],
    }
}


def test_vector_1_is_reproduced_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording vector 1's input on an empty store writes its exact line."""
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-01-01T00:00:00Z")
    root = _vector_store(tmp_path, "i0123456789abcdef")
    result = record(root, json.dumps(VECTOR1_INPUT))
    shard = (root / "log" / "i0123456789abcdef.ndjson").read_bytes()
    assert shard == VECTORS[0] + b"\n"
    assert result["decisions"][0]["event_hash"] == orjson.loads(VECTORS[0])["hash"]
    assert result["elements"] == {
        "Invoice": "el_838c7794b307afdacd03",
        "Pricing": "el_f143b3d7d3e080571537",
    }


def test_vector_2_differs_only_by_the_author_ingest_always_sets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vector 2 has no author; ingest stamps the actor. Everything else matches."""
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-01-01T00:00:00Z")
    root = _vector_store(tmp_path, "i0123456789abcdef")
    record(root, json.dumps(VECTOR1_INPUT))
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-01-02T00:00:00Z")
    record(root, json.dumps({"decision": {"title": "Note \u2028 ü"}}))
    ours = open_engine(root).shards[0].events[1].decoded.event
    assert ours.decision is not None and ours.decision.author == "alice"
    without_author = replace(ours.decision, author="")
    without_author = replace(without_author, id=decision_id(without_author))
    rebuilt = replace(ours, decision=without_author)
    rebuilt = replace(rebuilt, hash=compute_hash(rebuilt))
    assert marshal_event(rebuilt) == VECTORS[1]


def test_vector_4_mutations_match_except_the_implicit_upsert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vector 4 was assembled by hand: ingest adds an upsert of Catalog it lacks."""
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-07-16T09:30:00Z")
    root = _vector_store(tmp_path, "ib7b4a6de081e4d20")
    doc = {
        "decision": {
            "title": "Sold-out products stay visible in search",
            "rationale": "Hiding them dropped organic traffic.",
            "author": "alice",
            "mutations": [
                {
                    "op": "set_prop",
                    "element": "feature:product-search",
                    "key": "show_sold_out",
                    "value": True,
                },
                {
                    "op": "add_link",
                    "from": "feature:product-search",
                    "to": "Catalog",
                    "link": "depends_on",
                },
                {
                    "op": "set_prop",
                    "element": "feature:product-search",
                    "key": "empty",
                    "value": None,
                },
            ],
        }
    }
    record(root, json.dumps(doc))
    ours = open_engine(root).shards[0].events[0].decoded.event.decision
    vector = decode_line(VECTORS[3]).event.decision
    assert ours is not None and vector is not None and ours.mutations is not None
    catalog = element_id("concept", "Catalog")
    kept = [m for m in ours.mutations if m.element_id != catalog]
    assert [marshal(mutation_obj(m)) for m in kept] == [
        marshal(mutation_obj(m)) for m in vector.mutations or ()
    ]
    assert ours.targets == vector.targets
    assert ours.shapes == tuple(sorted((*vector.shapes, catalog)))
    assert (ours.title, ours.rationale, ours.author) == (
        vector.title,
        vector.rationale,
        vector.author,
    )


def test_every_written_line_verifies(tmp_path: Path) -> None:
    """Hostile text round-trips: each written line passes both gates, canonically."""
    root = _vector_store(tmp_path, "i00000000000000aa")
    hostile = 'İ ΑΣ <&> \u2028\u2029 \x01\b\f é 😀 \\ "'
    docs = [
        {"decision": {"title": hostile, "rationale": hostile, "author": hostile}},
        {
            "decisions": [
                {
                    "title": f"t{i}",
                    "date": "2025-02-03",
                    "mutations": [
                        {
                            "op": "upsert_element",
                            "kind": hostile,
                            "name": f"n{i}",
                            "props": {hostile: i},
                        },
                        {
                            "op": "add_link",
                            "from": f"k:n{i}",
                            "to": hostile,
                            "link": "ß",
                        },
                    ],
                }
                for i in range(5)
            ]
        },
    ]
    for doc in docs:
        record(root, json.dumps(doc))
    engine = open_engine(root)
    (shard,) = engine.shards
    assert len(shard.events) == 6 and not shard.problems
    for item in shard.events:
        assert item.decoded.canonical and item.decoded.hash_ok
        assert item.decoded.decision_id_ok
    assert [e.decoded.event.lamport for e in shard.events] == [1, 2, 3, 4, 5, 6]
    assert shard.events[1].decoded.event.recorded_at == "2025-02-03T00:00:00Z"


# ------------------------------------------------------------------ lamport and chain


def test_lamport_follows_shard_tails_and_parent_this_shard(tmp_path: Path) -> None:
    """lamport = 1 + max tail lamport of every shard; the parent is this shard's tail."""
    root = _vector_store(tmp_path, "i00000000000000aa")
    go_log = Path(__file__).parent.parent / "fixtures" / "go-vectors" / "log"
    for shard in go_log.glob("*.ndjson"):
        (root / "log" / shard.name).write_bytes(shard.read_bytes())
    foreign = open_engine(root).shards
    tails = [s.events[-1].decoded.event.lamport for s in foreign]
    highest = max(e.decoded.event.lamport for s in foreign for e in s.events)
    assert max(tails) != highest  # these shards are not lamport-ordered: tails decide
    first = record(
        root, json.dumps({"decision": {"title": "a", "supersedes_on": ["X"]}})
    )
    second = record(
        root, json.dumps({"decision": {"title": "b", "supersedes_on": ["X"]}})
    )
    assert first["decisions"][0]["lamport"] == max(tails) + 1
    assert second["decisions"][0]["lamport"] == max(tails) + 2
    own = next(s for s in open_engine(root).shards if s.name.startswith("i00000000"))
    events = [e.decoded.event for e in own.events]
    assert events[0].parents is None and events[1].parents == (events[0].hash,)


def test_a_cloned_store_without_config_gets_an_identity(tmp_path: Path) -> None:
    """A store checked out from git has no kg.config.json; the first write mints one."""
    root = tmp_path / "store"
    init_store(root, actor="alice")
    (root / "kg.config.json").unlink()
    record(root, json.dumps({"decision": {"title": "a", "supersedes_on": ["X"]}}))
    cfg = json.loads((root / "kg.config.json").read_text())
    assert (root / "log" / f"{cfg['install_id']}.ndjson").exists()
