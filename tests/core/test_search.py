"""Search: relevance, determinism across builds, hostile queries, the cache."""

from __future__ import annotations

import os
import random
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from search_stores import mixed_store, relevance_store

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import WriteError
from kgai_tui.core.gosem.gojson import marshal_indent, with_go_floats
from kgai_tui.core.recall.scoring import ScanScorer, scan_corpus
from kgai_tui.core.search.analysis import query_terms
from kgai_tui.core.search.cache import (
    IndexState,
    PartState,
    cache_dir_for,
    dir_manifest,
    load_state,
    save_state,
    write_lock,
)
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import SearchHit, search_obj
from kgai_tui.core.store.shards import read_log

# ------------------------------------------------------------------ helpers


def _index(root: Path) -> SearchIndex:
    return SearchIndex.for_engine(open_engine(root))


def _json(hits: list[SearchHit] | None) -> bytes:
    return marshal_indent(with_go_floats(search_obj(hits)))


def _names(hits: list[SearchHit] | None) -> list[str]:
    assert hits is not None
    return [h.name for h in hits]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def team(tmp_path: Path) -> tuple[SearchIndex, dict[str, str], Path]:
    root = tmp_path / "store"
    ids = relevance_store(root)
    return _index(root), ids, root


# ------------------------------------------------------------------ relevance (spec 8)


def test_tokenizing_splits_camel_kebab_and_drops_stopwords() -> None:
    # spec 8: {invoice, rendering, structured, billing, module}, here stemmed.
    terms = query_terms("How is InvoiceRendering structured in the billing-module?")
    assert terms == ["invoic", "render", "structur", "bill", "modul"]
    assert query_terms("snake_case_word") == ["snake", "case", "word"]


def test_invoice_question_ranks_invoice_first_and_never_checkout(team) -> None:
    index, _, _ = team
    for include_all in (False, True):
        hits = index.search(
            "how is invoice rendering handled in billing", include_all=include_all
        )
        assert hits
        assert "invoice" in hits[0].name.lower()
        assert "Checkout" not in _names(hits)
        assert all("Checkout" not in h.elements for h in hits)


def test_the_reference_scan_scorer_agrees_on_the_spec_case(team) -> None:
    _, _, root = team
    scan = ScanScorer(scan_corpus(open_engine(root).projection))
    hits = scan.search("how is invoice rendering handled in billing")
    assert hits
    assert "invoice" in hits[0]["name"].lower()
    assert "Checkout" not in [h["name"] for h in hits]
    assert scan.search("the of and") is None
    assert scan.search("zzzz qqqq") == []


@pytest.mark.parametrize(
    "query",
    [
        "InvoiceRendering",
        "invoice-rendering",
        "rendering invoices",
        "invoice_rendering",
    ],
)
def test_spellings_of_a_name_meet(team, query: str) -> None:
    index, _, _ = team
    hits = index.search(query)
    assert "InvoiceRendering" in _names(hits)[:3]


def test_typo_prefix_and_phrase(team) -> None:
    index, ids, _ = team
    assert "Invoice" in _names(index.search("invoce"))  # typo-tolerant fallback
    assert _names(index.search("invoi*"))[0] == "Invoice"
    assert "InvoiceRendering" in _names(index.search("InvoiceRend*"))[:2]
    hits = index.search('"draft invoices"')
    assert [h.id for h in hits or []] == [ids["drafts"]]
    assert index.search('"invoices draft"') == []


def test_filters(team) -> None:
    index, ids, _ = team
    hits = index.search("kind:service")
    assert {(h.kind, h.name) for h in hits or []} == {
        ("element", "Checkout"),
        ("decision", "Checkout uses Stripe"),
    }
    by_bob = index.search("author:bob", include_all=True)
    assert {h.id for h in by_bob or []} == {
        ids["checkout"],
        ids["session"],
        ids["note"],
    }
    assert all(h.kind == "decision" for h in by_bob or [])
    about = index.search("element:Invoice", include_all=True)
    assert {h.id for h in about or [] if h.kind == "decision"} == {
        ids["pdf"],
        ids["drafts"],
    }
    assert {h.name for h in about or [] if h.kind == "element"} == {"Invoice"}
    assert index.search("element:feature:Invoice drafts")[0].id == ids["drafts"]
    assert index.search("element:Nowhere invoice") == []
    only = index.search("kind:decision invoice")
    assert only and all(h.kind == "decision" for h in only)
    # Only a type filter: the history index (decisions only, no doctype field) must
    # still match every decision, not just exclude the bad ids.
    for when in (None, datetime(2026, 3, 1, tzinfo=UTC)):
        every = index.search("kind:decision", include_all=True, as_of=when)
        assert every and all(h.kind == "decision" for h in every)
        assert {ids["pdf"], ids["drafts"]} <= {h.id for h in every}


def test_default_covers_decisions_in_force_and_all_adds_the_rest(team) -> None:
    index, ids, _ = team
    in_force = {h.id for h in index.search("invoice cafe") or []}
    everything = {h.id for h in index.search("invoice cafe", include_all=True) or []}
    # pdf is superseded on Invoice but still in force on InvoiceRendering.
    assert ids["pdf"] in in_force and ids["drafts"] in in_force
    assert ids["note"] not in in_force  # a dead end (provenance only)
    assert ids["note"] in everything


def test_as_of_restricts_to_what_was_recorded(team) -> None:
    index, ids, _ = team
    jan = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)
    early = index.search("invoice drafts", as_of=jan)
    assert ids["drafts"] not in {h.id for h in early or []}
    assert ids["pdf"] in {h.id for h in early or []}
    before_all = index.search("invoice", as_of=datetime(2026, 1, 1, tzinfo=UTC))
    assert before_all == []  # nothing existed yet, not even the element
    assert {h.name for h in index.search("checkout", as_of=jan) or []} >= {"Checkout"}
    # In force then: the PDF decision headed Invoice until drafts superseded it.
    then = index.search("element:feature:Invoice", as_of=jan)
    assert [h.id for h in then or [] if h.kind == "decision"] == [ids["pdf"]]
    # Later both are in force (the PDF decision still heads InvoiceRendering).
    later = index.search(
        "element:feature:Invoice", as_of=datetime(2026, 3, 1, tzinfo=UTC)
    )
    assert {h.id for h in later or [] if h.kind == "decision"} == {
        ids["drafts"],
        ids["pdf"],
    }


def test_no_tokens_is_null_and_no_match_is_empty(team) -> None:
    index, _, _ = team
    for text in ["", "   ", "the of and", "*", '"', "( ) : AND OR", "it's", "x"]:
        assert index.search(text) is None, text
    assert index.search("zzzzqqqq") == []
    assert _json(None) == b'{\n  "hits": null,\n  "ok": true\n}\n'
    assert _json([]) == b'{\n  "hits": [],\n  "ok": true\n}\n'


def test_hits_carry_kg_keys_rounded_scores_and_snippet_spans(team) -> None:
    index, ids, _ = team
    hits = index.search("Café déjà-vu", include_all=True)
    note = next(h for h in hits or [] if h.id == ids["note"])
    assert note.snippet is not None and note.snippet.field == "title"
    marked = [note.snippet.text[a:b] for a, b in note.snippet.spans]
    assert marked == ["déjà", "vu", "Café"]
    obj = note.to_obj()
    assert list(obj) == ["kind", "id", "name", "extra", "score", "snippet"]
    assert obj["score"] == round(obj["score"], 4)
    element = index.search("InvoiceRendering")
    el = next(h for h in element or [] if h.kind == "element")
    assert el.extra == "module" and el.snippet is not None
    assert [el.snippet.text[a:b] for a, b in el.snippet.spans] == [
        "Invoice",
        "Rendering",
    ]
    pdf = next(
        h
        for h in index.search("printable", include_all=True) or []
        if h.id == ids["pdf"]
    )
    assert pdf.elements == ("Invoice", "InvoiceRendering")
    assert pdf.snippet is not None and pdf.snippet.field == "rationale"


# ------------------------------------------------------------------ determinism


def _queries(root: Path, n: int) -> list[str]:
    p = open_engine(root).projection
    rng = random.Random(4)
    names = sorted(a["name"] for _, a in p.graph.nodes(data=True) if a["name"])
    titles = sorted(t for t in p.dec_title if t)
    words = sorted({w for t in titles for w in re.findall(r"\w+", t)})
    fixed = [
        "reshape", "decision", "invoice rendering", "InvoiceRend*", "E0000*",
        '"reshape E000007"', "author:carol invoices", "kind:module", "kind:feature E000010",
        "element:Checkout payment", "rehsape", "cafe", "it's (AND) \"", "bench decision",
        "batch 1", "rev", "author:igen000000000002", "kind:decision reshape",
    ]  # fmt: skip
    out = list(fixed)
    while len(out) < n:
        kind = len(out) % 5
        if kind == 0:
            out.append(rng.choice(names))
        elif kind == 1:
            out.append(" ".join(rng.sample(words, 2)))
        elif kind == 2:
            out.append(rng.choice(names)[:4] + "*")
        elif kind == 3:
            t = rng.choice(titles).split()
            out.append('"' + " ".join(t[:2]) + '"')
        else:
            w = rng.choice(words)
            out.append(w[:-1] if len(w) > 4 else w + "s")
    return out


def _answers(index: SearchIndex, queries: list[str]) -> list[bytes]:
    cut = datetime(2026, 1, 1, 0, 20, tzinfo=UTC)
    out = []
    for i, q in enumerate(queries):
        out.append(_json(index.search(q)))
        out.append(_json(index.search(q, include_all=True, limit=7)))
        if i % 10 == 0:
            out.append(_json(index.search(q, as_of=cut)))
    return out


def _append_in_chunks(src: Path, dst: Path) -> list[str]:
    """Grow ``dst`` towards ``src`` shard by shard, indexing after every step."""
    shards = {
        p.name: p.read_bytes().splitlines(keepends=True)
        for p in (src / "log").iterdir()
    }
    (dst / "log").mkdir(parents=True)
    done = dict.fromkeys(shards, 0)
    hows = []
    step = 0
    while any(done[n] < len(lines) for n, lines in shards.items()):
        for k, (name, lines) in enumerate(sorted(shards.items())):
            if (step + k) % 3 == 0 and step < 4:
                continue  # some shards start late, so later chunks hold old lamports
            size = max(1, len(lines) // (2 + k % 3))
            chunk = lines[done[name] : done[name] + size]
            if chunk:
                with open(dst / "log" / name, "ab") as fh:
                    fh.write(b"".join(chunk))
                done[name] += len(chunk)
        hows.append(_index(dst).info.how)
        step += 1
    return hows


def test_four_builds_give_byte_identical_answers(tmp_path: Path) -> None:
    src = tmp_path / "fresh"
    mixed_store(src)
    queries = _queries(src, 100)
    fresh = _index(src)
    assert fresh.info.how == "built"
    grown = tmp_path / "grown"
    hows = _append_in_chunks(src, grown)
    assert hows[0] == "built" and set(hows[1:]) == {"appended"}
    incremental = _index(grown)
    assert incremental.info.how == "cached"
    reopened = SearchIndex.open_cached(src)
    assert reopened is not None and reopened.info.how == "cached"
    reversed_order = SearchIndex.for_engine(
        Engine.from_shards(list(reversed(read_log(src / "log"))))
    )
    assert reversed_order.info.how == "memory"
    expected = _answers(fresh, queries)
    assert sum(b'"hits": [\n' in a for a in expected) > 150  # most queries match
    for other in (incremental, reopened, reversed_order):
        assert _answers(other, queries) == expected


# ------------------------------------------------------------------ hostile input

SYNTAX = [
    *'"():*^~+-!\\[]{}/',
    "AND",
    "OR",
    "NOT",
    "it's",
    "kind:",
    "author:",
    "element:",
    "*",
    "\x00",
    "é",
    "日本",
    "🙂",
]


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(st.one_of(st.sampled_from(SYNTAX), st.text(max_size=12)), max_size=8),
    st.booleans(),
)
def test_hostile_queries_never_raise(team, parts: list[str], include_all: bool) -> None:
    index, _, _ = team
    text = " ".join(parts) if len(parts) % 2 else "".join(parts)
    hits = index.search(text, include_all=include_all, limit=5)
    assert hits is None or len(hits) <= 5
    _json(hits)


def test_hostile_as_of_and_long_queries(team) -> None:
    index, _, _ = team
    cut = datetime(2026, 1, 10, tzinfo=UTC)
    for text in [
        '"' * 99,
        "a" * 5000,
        "kind:" * 50,
        "*" * 30,
        "e" * 70 + "*",
        "\x00\x01",
    ]:
        index.search(text, as_of=cut)
        index.search(text, include_all=True)


# ------------------------------------------------------------------ the cache


def test_cache_lives_in_the_user_cache_dir_and_the_store_is_untouched(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    relevance_store(root)
    before = _snapshot(root)
    index = _index(root)
    index.search("invoice")
    index.search("invoice", as_of=datetime(2026, 3, 1, tzinfo=UTC))
    assert _snapshot(root) == before
    cache_home = Path(os.environ["XDG_CACHE_HOME"])
    assert index.info.path is not None
    assert index.info.path.is_relative_to(cache_home / "kgai-tui")
    assert index.info.path == cache_dir_for(root)


def test_appended_events_are_indexed_incrementally_and_other_changes_rebuild(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    mixed_store(root)
    shard = root / "log" / "ihuman000000000h.ndjson"
    data = shard.read_bytes()
    head, tail = data[: len(data) // 2], data[len(data) // 2 :]
    cut = head.rfind(b"\n") + 1
    shard.write_bytes(data[:cut])
    assert _index(root).info.how == "built"
    assert _index(root).info.how == "cached"
    shard.write_bytes(data)
    grown = _index(root)
    assert grown.info.how == "appended" and grown.info.added == data.count(
        b"\n"
    ) - data[:cut].count(b"\n")
    del head, tail
    # Rewriting history (same size, other bytes) is not an append: rebuild.
    shard.write_bytes(data.replace(b"Round 1:", b"Round X:"))
    assert _index(root).info.how == "built"
    # A removed shard rebuilds too.
    shard.unlink()
    assert _index(root).info.how == "built"


@pytest.mark.parametrize(
    "damage", ["truncate", "byte", "state", "foreign", "half", "missing"]
)
def test_a_damaged_index_is_rebuilt_with_identical_answers(
    tmp_path: Path, damage: str
) -> None:
    root = tmp_path / "store"
    relevance_store(root)
    index = _index(root)
    queries = ["invoice", "checkout stripe", "kind:feature", "invoce", "InvoiceRend*"]
    expected = _answers(index, queries)
    cache = cache_dir_for(root)
    state = load_state(cache, index_stamp(), str(root.resolve()))
    assert state is not None
    if damage == "truncate":
        victim = max(
            (cache / state.history.dir).iterdir(), key=lambda p: p.stat().st_size
        )
        with open(victim, "r+b") as fh:
            fh.truncate(victim.stat().st_size // 2)
    elif damage == "byte":  # changed in place, same size: sizes alone believed it
        # (the field norms: tantivy reads them as they are, into every score)
        victim = next((cache / state.live.dir).glob("*.fieldnorm"))
        with open(victim, "r+b") as fh:
            old = fh.read(1)[0]
            fh.seek(0)
            fh.write(bytes([old ^ 0xFF]))
    elif damage == "state":
        (cache / "state.json").write_bytes(b'{"body": {"stamp": ')
    elif damage == "foreign":
        save_state(
            cache,
            type(state)(
                "other-version", state.store, state.shards, state.history, state.live
            ),
        )
    elif damage == "half":  # a commit whose state was never written: counts disagree
        part = type(state.history)(
            state.history.dir, state.history.docs - 1, state.history.files
        )
        save_state(
            cache, type(state)(state.stamp, state.store, state.shards, part, state.live)
        )
    else:
        for path in (cache / state.live.dir).iterdir():
            path.unlink()
    assert SearchIndex.open_cached(root) is None
    again = _index(root)
    assert again.info.how == "built"
    assert _answers(again, queries) == expected
    assert SearchIndex.open_cached(root) is not None


def _damage_behind_the_state(root: Path) -> None:
    """Garbage in the live index's stored documents, the state written again to
    match: damage the files' identities cannot see (a disk returning other bytes)."""
    cache = cache_dir_for(root)
    state = load_state(cache, index_stamp(), str(root.resolve()))
    assert state is not None
    store = next((cache / state.live.dir).glob("*.store"))
    # In place, never cut short: this process may still map the file (an index
    # opened before), and a mapped page past a file's end is SIGBUS.
    with open(store, "r+b") as fh:
        data = bytearray(fh.read(400))
        for at in range(40, len(data)):
            data[at] ^= 0x55
        fh.seek(0)
        fh.write(bytes(data))
    live = type(state.live)(
        state.live.dir,
        state.live.docs,
        dir_manifest(cache / state.live.dir),
        state.live.digest,
    )
    save_state(
        cache, type(state)(state.stamp, state.store, state.shards, state.history, live)
    )


def test_a_search_failing_inside_the_index_builds_it_again(tmp_path: Path) -> None:
    from kgai_tui.core.answers.answer import encode
    from kgai_tui.core.answers.search import search_answer

    root = tmp_path / "store"
    relevance_store(root)
    _index(root)

    def source(_as_of: bool) -> SearchIndex:
        return SearchIndex.open_cached(root) or _index(root)

    expected = encode(search_answer(source, "invoice"))
    _damage_behind_the_state(root)
    believed = SearchIndex.open_cached(root)
    assert believed is not None, "the damage is behind an intact state"
    with pytest.raises(ValueError):
        believed.search("invoice")
    assert encode(search_answer(source, "invoice")) == expected
    again = SearchIndex.open_cached(root)
    assert again is not None and again.info.how == "cached"
    assert _json(again.search("invoice")) == _json(_index(root).search("invoice"))


def test_the_mcp_server_opens_a_failed_index_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server keeps the index it opened between calls; one a search failed
    in is not kept (the retry would meet it again, and so would every later
    search)."""
    import anyio

    from kgai_tui.mcp.server import build_server

    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "store"
    relevance_store(root)
    _index(root)

    def ask() -> str:
        server = build_server(str(root))
        return str(anyio.run(server.call_tool, "search", {"query": "invoice"}))

    first = ask()
    assert "invoice" in first.lower() and "is_error=False" in first
    _damage_behind_the_state(root)
    assert ask() == first


def test_the_explorer_opens_a_failed_index_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Search view keeps one index per opened store, the MCP server's way."""
    from kgai_tui.core.model.read import read_store
    from kgai_tui.ui.search_adapter import run_search
    from kgai_tui.ui.snapshot import Snapshot
    from kgai_tui.ui.theme import palette_from_variables

    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "store"
    relevance_store(root)
    _index(root)

    def search() -> tuple[object, ...]:
        opened = read_store(root)  # a store opened anew opens its index anew
        try:
            shot = Snapshot(
                opened, opened.projection, None, None, 1, palette_from_variables({})
            )
            return run_search(shot, "invoice", include_all=False)
        finally:
            opened.close()

    first = search()
    assert first[0]
    _damage_behind_the_state(root)
    assert search() == first


def test_a_damaged_index_that_cannot_be_dropped_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgai_tui.core.answers.search import search_answer
    from kgai_tui.core.search import damage

    root = tmp_path / "store"
    relevance_store(root)
    _index(root)
    _damage_behind_the_state(root)
    monkeypatch.setattr(damage, "drop_state", lambda _cache: False)  # read-only

    def source(_as_of: bool) -> SearchIndex:
        opened = SearchIndex.open_cached(root)
        assert opened is not None
        return opened

    with pytest.raises(damage.SearchIndexDamagedError) as raised:
        search_answer(source, "invoice")
    assert "\n" not in str(raised.value) and "rebuild" in raised.value.advice


@pytest.mark.parametrize("sizes", ["as-recorded", "one-changed"])
def test_an_earlier_releases_state_is_trusted_once_by_its_sizes(
    tmp_path: Path, sizes: str
) -> None:
    """An index recorded with file sizes only (before identities) is opened as
    that release opened it, and its state written again with identities: the
    first search after an upgrade does not replay the whole store to build it."""
    root = tmp_path / "store"
    relevance_store(root)
    _index(root)
    cache = cache_dir_for(root)
    state = load_state(cache, index_stamp(), str(root.resolve()))
    assert state is not None

    def sized(part: PartState) -> PartState:
        files = {name: ident[1] for name, ident in part.files.items()}
        if sizes == "one-changed" and part is state.live:
            name = next(iter(files))
            files[name] += 1
        return PartState(part.dir, part.docs, files, part.digest)  # type: ignore[arg-type]

    save_state(
        cache,
        IndexState(
            state.stamp,
            state.store,
            state.shards,
            sized(state.history),
            sized(state.live),
        ),
    )
    opened = SearchIndex.open_cached(root)
    if sizes == "one-changed":
        assert opened is None
        return
    assert opened is not None and opened.info.how == "cached"
    assert load_state(cache, index_stamp(), str(root.resolve())) == state
    raw = (cache / "state.json").read_bytes()
    assert SearchIndex.open_cached(root) is not None
    assert (cache / "state.json").read_bytes() == raw, "written once"


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    with (
        write_lock(tmp_path),
        pytest.raises(WriteError, match="locked"),
        write_lock(tmp_path, timeout=0.2),
    ):
        pass
    with write_lock(tmp_path, timeout=0.2):
        pass


def test_bad_lines_are_not_indexed(tmp_path: Path) -> None:
    root = tmp_path / "store"
    relevance_store(root)
    shard = root / "log" / "ibob0000000000bb.ndjson"
    shard.write_bytes(
        shard.read_bytes().replace(b"Sessions live in Redis", b"Sessions live in Mongo")
        + b'{"torn'
    )
    index = _index(root)
    assert index.search("mongo", include_all=True) == []  # its hash no longer verifies
    assert index.search("redis", include_all=True) == []


def index_stamp() -> str:
    from kgai_tui.core.search.backend import STAMP

    return STAMP


def test_an_unwritable_cache_falls_back_to_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "store"
    relevance_store(root)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    index = _index(root)
    assert index.info.how == "memory"
    assert _names(index.search("checkout"))[0] in {"Checkout", "Checkout uses Stripe"}


def test_a_given_projection_at_the_moment_gives_the_same_answer(tmp_path: Path) -> None:
    from kgai_tui.core.reads.as_of import project_as_of

    root = tmp_path / "store"
    relevance_store(root)
    engine = open_engine(root)
    cut = datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC)
    given = SearchIndex.for_engine(engine)
    replayed = SearchIndex.open_cached(root)
    assert replayed is not None
    for q in ["invoice", "element:feature:Invoice", "checkout", "kind:decision"]:
        with_projection = given.search(
            q, as_of=cut, projection_at=project_as_of(engine.shards, cut)
        )
        assert _json(with_projection) == _json(replayed.search(q, as_of=cut))


def test_limits(team) -> None:
    index, _, _ = team
    assert len(index.search("invoice", limit=1) or []) == 1
    assert (
        index.search("invoice", limit=0)
        == index.search("invoice", limit=-5)
        == index.search("invoice")
    )
    assert len(index.search("invoice", limit=10**12, include_all=True) or []) >= 3
