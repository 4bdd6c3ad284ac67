"""Stores for the search tests: a hand-built one and a generated one."""

from __future__ import annotations

from pathlib import Path

from builders import ShardWriter, decision, link, set_prop, upsert, write_store

from benchmarks.genlog import GenParams
from benchmarks.genlog import write_store as gen_store
from kgai_tui.core.wire.ids import element_id


def relevance_store(root: Path) -> dict[str, str]:
    """Write a small team store; return decision ids by nickname.

    alice records the invoice work and later re-decides Invoice; bob records a
    checkout service, a session store and a provenance-only note (a dead end).
    """
    a = ShardWriter("ialice00000000aa", actor="alice")
    b = ShardWriter("ibob0000000000bb", actor="bob")
    ids: dict[str, str] = {}
    pdf = decision(
        "Render invoices as PDF",
        [
            upsert("feature", "Invoice", paths="src/billing/*"),
            upsert("module", "InvoiceRendering"),
            link(
                "add_link",
                ("module", "InvoiceRendering"),
                ("feature", "Invoice"),
                "RENDERS",
            ),
        ],
        rationale="Customers need printable invoices; the billing-module owns it.",
    )
    a.add(pdf, lamport=1, recorded_at="2026-01-05T10:00:00Z")
    ids["pdf"] = pdf.id
    checkout = decision(
        "Checkout uses Stripe",
        [upsert("service", "Checkout", team="payments")],
        rationale="Payments are outsourced to keep PCI scope small.",
        author="bob",
    )
    b.add(checkout, lamport=2, recorded_at="2026-01-06T09:00:00Z")
    ids["checkout"] = checkout.id
    session = decision(
        "Sessions live in Redis",
        [upsert("component", "SessionStore")],
        rationale="Horizontal scaling of the web tier.",
        author="bob",
    )
    b.add(session, lamport=3, recorded_at="2026-01-07T09:00:00Z")
    ids["session"] = session.id
    drafts = decision(
        "Draft invoices stay visible",
        [
            upsert("feature", "Invoice"),
            set_prop("feature", "Invoice", "drafts", "visible"),
        ],
        rationale="Users asked to see drafts in the invoice list.",
        supersedes=[pdf.id],
    )
    a.add(drafts, lamport=4, recorded_at="2026-02-01T12:00:00Z")
    ids["drafts"] = drafts.id
    note = decision(
        "Note: caching déjà-vu in the Café module",
        None,
        rationale="Just provenance; nothing is decided here.",
        author="bob",
        shapes=[],
        targets=[],
    )
    b.add(note, lamport=5, recorded_at="2026-02-02T12:00:00Z")
    ids["note"] = note.id
    write_store(
        root,
        {
            "ialice00000000aa.ndjson": a.to_bytes(),
            "ibob0000000000bb.ndjson": b.to_bytes(),
        },
    )
    return ids


def mixed_store(root: Path) -> None:
    """A generated store (2,000 decisions) plus a hand-written shard of prose.

    The extra shard's lamports interleave with the generated ones, so appending the
    shards chunk by chunk adds events out of canonical order.
    """
    gen_store(root, GenParams(total=2000, installs=5, elems=120))
    w = ShardWriter("ihuman000000000h", actor="carol")
    prev = ""
    topics = [
        ("InvoiceRendering", "feature", "Render invoices with the new PDF engine"),
        ("billing-module", "module", "Billing owns tax rounding; it's final"),
        ("Checkout", "service", "Checkout retries payment (AND never twice)"),
        ("E000007", "feature", "Reshape E000007 after the user study"),
        ("Café", "component", "Café menus show prices in €, naïvely rounded"),
    ]
    for i in range(60):
        name, kind, title = topics[i % len(topics)]
        d = decision(
            f"{title} #{i}",
            [upsert(kind, name, step=str(i))],
            rationale=f"Round {i}: because the {name} work needs it.",
            author=["carol", "dave"][i % 2],
            supersedes=[prev] if prev and i % 3 else [],
        )
        prev = d.id
        w.add(
            d, lamport=17 + 31 * i, recorded_at=f"2026-01-01T{i % 24:02d}:3{i % 10}:00Z"
        )
    (root / "log" / "ihuman000000000h.ndjson").write_bytes(w.to_bytes())
    # A late writer: low lamports, recorded later. Its upsert names an element that
    # the human shard first met as a nameless stub (a link target it also shapes).
    late = ShardWriter("ilate0000000000l", actor="erin")
    ghost = ("component", "GhostQueue")
    for i in range(6):
        d = decision(
            f"Ghost queue drains nightly #{i}",
            [upsert(*ghost, owner="erin"), upsert("feature", "E000003")],
            rationale="The late writer syncs after everyone else.",
            author="erin",
        )
        late.add(d, lamport=3 + 40 * i, recorded_at=f"2026-01-02T0{i}:00:00Z")
    (root / "log" / "ilate0000000000l.ndjson").write_bytes(late.to_bytes())
    linker = ShardWriter("ilinker00000000k", actor="carol")
    for i in range(4):
        d = decision(
            f"Billing talks to the ghost queue #{i}",
            [link("add_link", ("module", "billing-module"), ghost, "SENDS_TO")],
            rationale="Stub first, named later.",
            author="carol",
            shapes=[element_id("module", "billing-module"), element_id(*ghost)],
        )
        linker.add(d, lamport=200 + 50 * i, recorded_at=f"2026-01-01T2{i}:00:00Z")
    (root / "log" / "ilinker00000000k.ndjson").write_bytes(linker.to_bytes())
