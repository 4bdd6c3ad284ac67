"""Replay semantics: heads, conflicts, stubs, authority, props and links (spec 3-4, 14)."""

from __future__ import annotations

from builders import ShardWriter, decision, link, set_prop, upsert

from kgai_tui.core.reads.export import export_parts
from kgai_tui.core.reads.kg import conflicts_obj, history_obj
from kgai_tui.core.replay.order import replay
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.wire.model import Decision, Event, Mutation
from kgai_tui.core.wire.props import parse_props
from kgai_tui.core.wire.props import set_prop as blob_set

INVOICE = element_id("feature", "Invoice")
T0 = "2026-01-0{}T00:00:00Z"


def _replay(*decisions: Decision, writer: str = "i1") -> Projection:
    w = ShardWriter(writer)
    for n, d in enumerate(decisions, start=1):
        w.add(d, lamport=n, recorded_at=T0.format(min(n, 9)))
    return replay(sorted(w.events, key=lambda e: (e.lamport, e.hash)))


def test_two_writers_on_one_element_conflict_newest_first() -> None:
    """Two authority decisions with no supersession are two heads, newest first."""
    a, b = ShardWriter("ia"), ShardWriter("ib")
    d1 = decision("Create invoice", [upsert("feature", "Invoice")])
    d2 = decision(
        "Draft invoices stay visible", [set_prop("feature", "Invoice", "drafts", "on")]
    )
    d3 = decision("Create invoice too", [upsert("feature", "Invoice")], author="bob")
    a.add(d1, lamport=1, recorded_at=T0.format(1))
    a.add(d2, lamport=3, recorded_at=T0.format(3))
    b.add(d3, lamport=2, recorded_at=T0.format(2))
    events = sorted(a.events + b.events, key=lambda e: (e.lamport, e.hash))
    p = replay(events)
    # d2 does not supersede d1 here, so all three are heads.
    assert [p.dec_id[i] for i in p.heads_of(INVOICE)] == [d2.id, d3.id, d1.id]
    out = conflicts_obj(p)
    assert out["count"] == 1
    group = out["conflicts"][0]
    assert group["heads"] == [d2.id, d3.id, d1.id]
    assert group["titles"] == [d2.title, d3.title, d1.title]


def test_supersession_unseats_only_where_the_superseder_has_authority() -> None:
    """A superseder removes the old head only on elements it has authority over."""
    d1 = decision("Both", [upsert("feature", "Invoice"), upsert("feature", "Pricing")])
    d2 = decision(
        "Invoice only",
        [upsert("feature", "Invoice", split="yes")],
        supersedes=[d1.id],
        shapes=[INVOICE, element_id("feature", "Pricing")],
        targets=[INVOICE],
    )
    p = _replay(d1, d2)
    assert [p.dec_id[i] for i in p.heads_of(INVOICE)] == [d2.id]
    pricing = element_id("feature", "Pricing")
    assert [p.dec_id[i] for i in p.heads_of(pricing)] == [d1.id]
    assert not p.contested


def test_legacy_empty_targets_have_authority_everywhere() -> None:
    """Empty targets without provenance_only means authority on every shaped element."""
    d = decision(
        "Legacy", [upsert("feature", "Invoice")], targets=[], provenance_only=False
    )
    p = _replay(d)
    assert p.el_shapes[INVOICE] == {0: True}


def test_provenance_only_has_no_authority() -> None:
    """A provenance-only note shapes an element but is never a head."""
    d = decision(
        "Note", [upsert("feature", "Invoice")], targets=[], provenance_only=True
    )
    p = _replay(d)
    assert p.heads_of(INVOICE) == []
    assert history_obj(p, "feature:Invoice")["decisions"][0]["is_head"] is False


def test_forward_supersedes_creates_stub_that_keeps_empty_fields() -> None:
    """A decision superseded before its own event arrives stays a stub (rule 14.1)."""
    old = decision("Old", [upsert("feature", "Invoice")])
    new = decision("New", [upsert("feature", "Invoice", v="2")], supersedes=[old.id])
    p = _replay(new, old)  # old gets the higher lamport
    parts = export_parts(p)
    rows = {row["id"]: row for row in parts["decisions"]}
    assert rows[old.id] == {"id": old.id, "lamport": 0, "title": ""}
    assert [p.dec_id[i] for i in p.heads_of(INVOICE)] == [new.id]


def test_element_kind_and_name_are_fixed_by_the_first_upsert() -> None:
    """Later spellings of the same element do not rename it."""
    d1 = decision("a", [upsert("feature", "Invoice")])
    d2 = decision("b", [upsert("FEATURE", "  invoice ")])
    p = _replay(d1, d2)
    assert p.element(INVOICE) == ("feature", "Invoice", "")


def test_links_are_unique_per_triple_and_retire() -> None:
    """One link per (from, kind, to); retire removes it; re-adding restores it."""
    inv, pri = ("feature", "Invoice"), ("feature", "Pricing")
    d1 = decision(
        "l1", [upsert(*inv), upsert(*pri), link("add_link", inv, pri, "PART_OF")]
    )
    d2 = decision("l2", [link("add_link", inv, pri, "PART_OF")])
    p = _replay(d1, d2)
    assert p.graph.number_of_edges() == 1
    d3 = decision("l3", [link("retire_link", inv, pri, "PART_OF")])
    p = _replay(d1, d2, d3)
    assert p.graph.number_of_edges() == 0


def test_set_prop_is_last_writer_wins_in_canonical_order() -> None:
    """The event with the larger (lamport, hash) decides a prop's value."""
    d1 = decision("one", [set_prop("feature", "Invoice", "k", "1")])
    d2 = decision("two", [set_prop("feature", "Invoice", "k", "2")])
    p = _replay(d1, d2)
    assert parse_props(p.graph.nodes[INVOICE]["props"]) == {"k": "2"}


def test_unknown_ops_are_ignored_and_recorded() -> None:
    """An unknown op does not stop the decision's other mutations (rule 14.4)."""
    d = decision(
        "x",
        [
            Mutation(op="rename_element", element_id=INVOICE),
            upsert("feature", "Invoice"),
        ],
    )
    p = _replay(d)
    assert INVOICE in p.graph
    assert p.unknown_ops and p.unknown_ops[0][1] == "rename_element"


def test_duplicate_events_apply_once() -> None:
    """The same event twice (two shards) is applied once."""
    w = ShardWriter("i1")
    ev = w.add(
        decision("a", [upsert("feature", "Invoice")]),
        lamport=1,
        recorded_at=T0.format(1),
    )
    p = replay([ev, ev])
    assert p.applied_count == 1


def test_null_decision_only_marks_applied() -> None:
    """An event whose decision is null projects nothing but counts as applied."""
    w = ShardWriter("i1")
    ev: Event = w.add(None, lamport=1, recorded_at=T0.format(1))
    p = replay([ev])
    assert p.applied_count == 1 and p.graph.number_of_nodes() == 0


def test_props_blob_rules() -> None:
    """setProp trims keys, folds newlines, replaces ``=`` in keys and sorts lines."""
    blob = blob_set("", " b ", "x\ny")
    blob = blob_set(blob, "a=c", " v ")
    assert blob == "a-c= v \nb=x y"
    # Setting another key re-trims the old lines: the value's spaces are lost then.
    assert blob_set(blob, "c", "1") == "a-c= v\nb=x y\nc=1"
    assert parse_props("noequals\nk=v=w") == {"k": "v=w"}


def test_history_orders_by_time_then_lamport_with_backdated_first() -> None:
    """History is oldest first by recorded time, so a back-dated import sorts early."""
    w = ShardWriter("i1")
    late = decision("Recorded first", [upsert("feature", "Invoice")])
    back = decision("Back-dated", [set_prop("feature", "Invoice", "a", "1")])
    w.add(late, lamport=1, recorded_at="2026-05-01T00:00:00Z")
    w.add(back, lamport=2, recorded_at="2025-01-01T00:00:00Z")
    p = replay(w.events)
    titles = [row["title"] for row in history_obj(p, "feature:Invoice")["decisions"]]
    assert titles == ["Back-dated", "Recorded first"]
