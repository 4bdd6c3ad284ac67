"""Search finds things the way people type them (issue 42).

A table of queries on three stores: the bundled demo, the reference engine's vector
store (tests/fixtures/go-vectors, hostile text), and a small store that talks the
way the reference project's own store does (PostgreSQL, SendGrid, MeiliSearch,
Stripe webhooks). Every casing of a compound name finds what its written form
finds, one typo finds it below every exact match, and what found nothing says what
would. The answers are byte-identical across shard order and ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from builders import ShardWriter, decision, upsert, write_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import search_obj
from kgai_tui.demo import DEMO_STORE

VECTORS = Path(__file__).resolve().parent.parent / "fixtures" / "go-vectors"


def _vendor_shards() -> dict[str, bytes]:
    """Two writers' shards in the words of the reference project's store."""
    ann, bo = ShardWriter("i-ann", actor="ann"), ShardWriter("i-bo", actor="bo")
    old = decision(
        "Catalog search runs on Elasticsearch",
        [upsert("service", "CatalogSearch")],
        rationale="The ops team knows it.",
        author="ann",
    )
    rows = [
        (ann, old),
        (
            ann,
            decision(
                "Orders live in PostgreSQL",
                [upsert("infra", "PostgreSQL", role="primary")],
                rationale="PostgreSQL gives us transactions and row locks.",
                author="ann",
            ),
        ),
        (
            bo,
            decision(
                "Transactional email goes through SendGrid",
                [upsert("vendor", "SendGrid")],
                rationale="SendGrid templates are versioned; bounces come back as events.",
                author="bo",
            ),
        ),
        (
            bo,
            decision(
                "Catalog search moves to MeiliSearch",
                [upsert("service", "CatalogSearch", engine="MeiliSearch")],
                rationale="MeiliSearch is typo tolerant out of the box and cheap to run.",
                author="bo",
                supersedes=[old.id],
            ),
        ),
        (
            ann,
            decision(
                "Stripe webhooks are verified with the signing secret",
                [upsert("vendor", "Stripe"), upsert("feature", "PaymentWebhooks")],
                rationale="A webhook without a valid signature is dropped and logged.",
                author="ann",
            ),
        ),
        (
            bo,
            decision(
                "Reports read from a postgresql replica",
                [upsert("feature", "Reports")],
                rationale="the replica keeps reporting load off the primary database",
                author="bo",
            ),
        ),
    ]
    for lamport, (writer, d) in enumerate(rows, start=1):
        writer.add(d, lamport=lamport, recorded_at=f"2026-02-0{lamport}T09:00:00Z")
    return {"i-ann.ndjson": ann.to_bytes(), "i-bo.ndjson": bo.to_bytes()}


def _vendor_store(root: Path) -> Path:
    return write_store(root, _vendor_shards())


@pytest.fixture(scope="module")
def stores() -> Iterator[dict[str, SearchIndex]]:
    top = Path(tempfile.mkdtemp(prefix="kgai-forgiving-"))
    shutil.copytree(VECTORS / "log", top / "vectors" / "log")
    roots = {
        "demo": DEMO_STORE,
        "vendors": _vendor_store(top / "vendors"),
        "vectors": top / "vectors",
    }
    try:
        yield {
            name: SearchIndex.for_engine(open_engine(root))
            for name, root in roots.items()
        }
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _ids(index: SearchIndex, query: str, *, include_all: bool = False) -> list[str]:
    return [h.id for h in index.search(query, include_all=include_all) or ()]


def _names(index: SearchIndex, query: str) -> list[str]:
    return [h.name for h in index.search(query) or ()]


#: (store, what a person types, the form that was written): the same hits.
SAME_AS_WRITTEN = [
    ("vendors", "postgresql", "PostgreSQL"),
    ("vendors", "POSTGRESQL", "PostgreSQL"),
    ("vendors", "Postgresql", "PostgreSQL"),
    ("vendors", "postgreSQL", "PostgreSQL"),
    ("vendors", "sendgrid", "SendGrid"),
    ("vendors", "SENDGRID", "SendGrid"),
    ("vendors", "Sendgrid", "SendGrid"),
    ("vendors", "meilisearch", "MeiliSearch"),
    ("vendors", "MEILISEARCH", "MeiliSearch"),
    ("vendors", "Meilisearch", "MeiliSearch"),
    ("vendors", "catalogsearch", "CatalogSearch"),
    ("vendors", "paymentwebhooks", "PaymentWebhooks"),
    ("demo", "productsearch", "ProductSearch"),
    ("demo", "PRODUCTSEARCH", "ProductSearch"),
    ("demo", "invoicerendering", "InvoiceRendering"),
    ("demo", "INVOICERENDERING", "InvoiceRendering"),
    ("demo", "eventbus", "EventBus"),
    ("demo", "EVENTBUS", "EventBus"),
    ("demo", "taxrules", "TaxRules"),
    ("demo", "serviceauth", "ServiceAuth"),
    ("demo", "dataretention", "DataRetention"),
    ("demo", "searchsuggestions", "SearchSuggestions"),
    ("demo", "creditnotes", "CreditNotes"),
    ("demo", "accountpage", "AccountPage"),
    ("demo", "opentelemetry", "OpenTelemetry"),
]


@pytest.mark.parametrize(("store", "typed", "written"), SAME_AS_WRITTEN)
def test_every_casing_of_a_compound_finds_what_its_written_form_finds(
    stores: dict[str, SearchIndex], store: str, typed: str, written: str
) -> None:
    index = stores[store]
    expected = _ids(index, written)
    assert expected, f"{written} finds something in {store}"
    assert _ids(index, typed) == expected


#: (store, a query with one typo, the word meant): the same hits as the word.
ONE_TYPO = [
    ("vendors", "postgersql", "postgresql"),
    ("vendors", "sendgird", "sendgrid"),
    ("vendors", "SendGird", "sendgrid"),
    ("vendors", "meilisaerch", "meilisearch"),
    ("vendors", "stirpe", "stripe"),
    ("demo", "invoce", "invoice"),
    ("demo", "kafak", "kafka"),
    ("demo", "stirpe", "stripe"),
    ("demo", "prodcutsearch", "productsearch"),
    ("demo", "evnetbus", "eventbus"),
]


#: (store, a known word with a suffix the store never wrote, the word).
SUFFIXED = [
    ("demo", "postgresql", "postgres"),
    ("vendors", "stripejs", "stripe"),
    ("demo", "invoicesdb", "invoices"),
]


@pytest.mark.parametrize(("store", "typed", "meant"), ONE_TYPO + SUFFIXED)
def test_a_word_the_store_lacks_finds_what_the_word_meant_finds(
    stores: dict[str, SearchIndex], store: str, typed: str, meant: str
) -> None:
    """One typo, or a suffix the store never wrote: the same hits as the word
    meant, and the notes' corrected query is it."""
    index = stores[store]
    expected = _ids(index, meant)
    assert expected
    assert _ids(index, typed) == expected
    notes = index.notes(typed, index.search(typed))
    assert notes.did_you_mean is not None and notes.did_you_mean.lower() == meant


def test_a_short_head_is_no_suggestion(stores: dict[str, SearchIndex]) -> None:
    """``cartqz``: ``cart`` is four letters, too short to take for the word."""
    index = stores["demo"]
    assert index.search("cartqz") == []
    notes = index.notes("cartqz", [])
    assert notes.did_you_mean is None
    assert any("no decision or element has the word 'cartqz'" in n for n in notes.lines)


def test_a_typo_beside_a_known_word_comes_after_every_exact_match(
    stores: dict[str, SearchIndex],
) -> None:
    """``stripe webhok``: the Stripe hits first, as ``stripe`` alone ranks them,
    then what only the corrected word finds; never above them."""
    index = stores["vendors"]
    stripe = _ids(index, "stripe")
    both = _ids(index, "stripe webhok")
    assert both[: len(stripe)] == stripe
    webhook = _ids(index, "webhook")
    assert set(webhook) - set(stripe), "the typo tier adds something"
    assert set(both[len(stripe) :]) <= set(webhook)
    assert set(webhook) <= set(both)


def test_exact_forms_rank_before_stems_and_a_known_word_is_never_fuzzed(
    stores: dict[str, SearchIndex],
) -> None:
    index = stores["demo"]
    # "Invoices" is a word of the store: no typo tier, the hits as before.
    exact = index.search("invoices")
    assert exact
    assert [h.id for h in exact] == _ids(index, "invoices")
    # A word the store holds whole is not split when it is no compound there.
    assert _ids(index, "checkout") == _ids(index, "Checkout")


def test_the_lowercase_word_a_document_wrote_is_found_by_its_camelcase_form(
    stores: dict[str, SearchIndex],
) -> None:
    """One decision wrote "postgresql"; typed ``PostgreSQL`` finds it too."""
    names = _names(stores["vendors"], "PostgreSQL")
    assert "Reports read from a postgresql replica" in names
    assert "Orders live in PostgreSQL" in names


def test_phrases_bridge_compounds_too(stores: dict[str, SearchIndex]) -> None:
    index = stores["vendors"]
    assert _names(index, '"postgresql gives"') == _names(index, '"PostgreSQL gives"')
    assert _names(index, '"PostgreSQL gives"') == ["Orders live in PostgreSQL"]


#: (store, query, a line the notes must hold).
NOTES = [
    ("vendors", "elasticsearch", "no decision in force matches; 1 superseded"),
    ("vendors", "stripe webhok", "'webhok'; did you mean 'webhook'?"),
    ("vendors", "sendgird", "did you mean 'sendgrid'?"),
    ("demo", "evnetbus", "did you mean 'eventbus'?"),
    ("demo", "postgresql", "did you mean 'postgres'?"),
    ("vendors", "stripejs", "did you mean 'stripe'?"),
    ("demo", "xyzzy", "no decision or element has the word 'xyzzy'"),
    ("demo", "kind:foo invoice", "no element kind 'foo'"),
    ("demo", '"draft invoices', "unclosed quote"),
    ("demo", "element:Nope invoice", "no element 'Nope'"),
]


@pytest.mark.parametrize(("store", "query", "line"), NOTES)
def test_a_search_that_finds_little_says_what_would(
    stores: dict[str, SearchIndex], store: str, query: str, line: str
) -> None:
    index = stores[store]
    notes = index.notes(query, index.search(query))
    assert any(line in n for n in notes.lines), notes


def test_did_you_mean_is_the_query_with_the_typo_corrected(
    stores: dict[str, SearchIndex],
) -> None:
    index = stores["vendors"]
    notes = index.notes("Stripe webhok", index.search("Stripe webhok"))
    assert notes.did_you_mean == "Stripe webhook"
    assert index.notes("stripe", index.search("stripe")).lines == ()


def test_known_words_give_no_notes(stores: dict[str, SearchIndex]) -> None:
    for store, query in [("demo", "invoice"), ("vendors", "postgresql replica")]:
        index = stores[store]
        assert index.notes(query, index.search(query)).lines == ()


def test_the_hostile_vector_store_searches_and_bridges(
    stores: dict[str, SearchIndex],
) -> None:
    """The reference engine's vectors: every title word searched in lower case
    finds what the word as written finds."""
    index = stores["vectors"]
    hits = index.search("kind:decision", limit=200) or []
    words = sorted(
        {w for h in hits for w in h.name.split() if w.isascii() and w.isalpha()}
    )[:40]
    assert words
    for word in words:
        assert _ids(index, word.lower()) == _ids(index, word), word


_DUMP = """
import sys, orjson
from pathlib import Path
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import search_obj
index = SearchIndex.for_engine(open_engine(Path(sys.argv[1])))
out = []
for q in sys.argv[2:]:
    hits = index.search(q)
    notes = index.notes(q, hits)
    out.append([search_obj(hits), list(notes.lines), notes.did_you_mean])
sys.stdout.buffer.write(orjson.dumps(out))
"""

QUERIES = [
    "postgresql",
    "SENDGRID",
    "meilisearch",
    "stripe webhok",
    "elasticsearch",
    "postgersql",
    '"postgresql gives"',
]


def test_answers_are_byte_identical_across_shard_order_and_hash_seed(
    tmp_path: Path,
) -> None:
    shards = _vendor_shards()
    answers = set()
    for n, (seed, order) in enumerate([("0", 1), ("1", -1), ("4242", -1)]):
        root = tmp_path / f"s{n}"
        (root / "log").mkdir(parents=True)
        for name in sorted(shards)[::order]:  # files created in either order
            (root / "log" / name).write_bytes(shards[name])
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "KGAI_TUI_CACHE_DIR": str(tmp_path / f"c{n}"),
        }
        out = subprocess.run(
            [sys.executable, "-c", _DUMP, str(root), *QUERIES],
            env=env,
            capture_output=True,
            check=True,
        ).stdout
        answers.add(out)
    assert len(answers) == 1
    got = orjson.loads(answers.pop())
    assert got[0][0]["hits"], "postgresql finds PostgreSQL"
    assert search_obj([]) == {"hits": [], "ok": True}


def test_a_shard_named_with_invalid_utf8_never_stops_a_search(tmp_path: Path) -> None:
    """Search (text and JSON) answers, keeps its index for the next search, and the
    name reaches the screen only as visible text."""
    root = tmp_path / "store"
    shutil.copytree(DEMO_STORE, root)
    log = os.fsencode(root / "log")
    first = sorted(os.listdir(log))[0]
    bad = os.path.join(log, b"i-\xff\xfe-bad.ndjson")
    os.rename(os.path.join(log, first), bad)
    with open(bad, "ab") as fh:
        fh.write(b"not json\n")
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")}
    outs = []
    for fmt in ("--text", "--json", "--json"):
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "kgai_tui",
                "search",
                "--store",
                str(root),
                fmt,
                "invoice",
            ],
            env=env,
            capture_output=True,
        )
        assert run.returncode == 0, run.stderr.decode()
        assert b"Traceback" not in run.stderr
        assert b"\x1b" not in run.stdout + run.stderr
        outs.append(run.stdout)
    assert outs[0].startswith("● Invoice".encode())
    assert orjson.loads(outs[1])["hits"]
    assert outs[1] == outs[2], "the second search reads the index the first kept"
    state = orjson.loads(
        next((tmp_path / "cache").glob("*/search/state.json")).read_bytes()
    )
    names = [row[0] for row in state["body"]["shards"]]
    assert {"hex": b"i-\xff\xfe-bad.ndjson".hex()} in names
    doctor = subprocess.run(
        [sys.executable, "-m", "kgai_tui", "doctor", "--store", str(root), "--text"],
        env=env,
        capture_output=True,
    )
    assert "log/i-<U+DCFF><U+DCFE>-bad.ndjson:" in doctor.stdout.decode()
