"""RecallIndex against the scan: the same keys and bit-identical floats (``==``)."""

from __future__ import annotations

import itertools
import mmap
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.genlog import GenParams, write_store
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads import context
from kgai_tui.core.reads.context import context_obj, decision_boost, relevance
from kgai_tui.core.recall import index as recall_index
from kgai_tui.core.recall import segments
from kgai_tui.core.recall import tokens as recall_tokens
from kgai_tui.core.recall.index import RecallIndex
from kgai_tui.core.recall.scoring import split_paths, strength, tokenize
from kgai_tui.core.recall.tokens import tokenize_many
from kgai_tui.core.recall.vocab import Bucket, Vocab
from kgai_tui.core.replay.projection import Projection
from kgai_tui.demo import DEMO_STORE

PROPS = settings(max_examples=60, deadline=None)


def assert_exact(
    ix: RecallIndex, p: Projection, q_toks: list[str], paths: Sequence[str] = ()
) -> None:
    """The index answers exactly what the scan answers."""
    brute = decision_boost(p, q_toks)
    assert ix.boost(q_toks) == brute
    want = {e: relevance(p, e, list(paths), q_toks, brute) for e in p.graph.nodes}
    got = ix.relevances(list(paths), q_toks)
    assert list(got) == list(want)
    assert got == want


def test_weights_are_the_context_weights() -> None:
    assert segments.PATH_WEIGHT == context.PATH_WEIGHT
    assert recall_index.ABOUT_WEIGHT == context.ABOUT_WEIGHT
    assert recall_index.DECISION_WEIGHT == context.DECISION_WEIGHT


# --------------------------------------------------------------------------- tokens

TEXT_CHARS = st.sampled_from(
    [
        *"abcXYZ019 _-:.\x01\n",
        "é",
        "É",
        "ß",
        "ǅ",
        "٣",
        "中",
        "\U0001f600",
        "\ud800",
        "İ",
        "K",
    ]
)
TEXTS = st.lists(st.text(TEXT_CHARS, max_size=30), max_size=12)


@PROPS
@given(
    texts=TEXTS,
    ascii_words=st.lists(
        st.from_regex(r"[A-Za-z0-9 ]{0,20}", fullmatch=True), max_size=8
    ),
)
def test_tokenize_many_equals_tokenize(
    texts: list[str], ascii_words: list[str]
) -> None:
    texts = texts + ascii_words + texts[:2]  # duplicates take the shared path
    vocab: dict[bytes, int] = {}
    owner, tid = tokenize_many(texts, vocab)
    names = {i: t for t, i in vocab.items()}
    got: list[set[bytes]] = [set() for _ in texts]
    for o, t in zip(owner.tolist(), tid.tolist(), strict=True):
        got[o].add(names[t])
    assert owner.tolist() == sorted(owner.tolist())
    want = [{t.encode("utf-8", "surrogatepass") for t in tokenize(s)} for s in texts]
    assert got == want


@PROPS
@given(
    texts=TEXTS,
    ascii_words=st.lists(
        st.from_regex(r"[A-Za-z0-9 ]{0,20}", fullmatch=True), max_size=12
    ),
    chunk=st.integers(1, 4),
)
def test_tokenize_many_in_chunks_gives_the_same_arrays_and_ids(
    texts: list[str], ascii_words: list[str], chunk: int
) -> None:
    """Texts are split into runs a chunk at a time (a model's first build held a
    million titles' runs at once): the owners, the token ids and the vocabulary
    are exactly those of one pass over them all, camelCase in some chunks only,
    non-ASCII texts and repeated texts among them."""
    texts = ascii_words + texts + ascii_words[:3]
    whole: dict[bytes, int] = {}
    want = tokenize_many(texts, whole)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(recall_tokens, "TOKENIZE_CHUNK", chunk)
        parts: dict[bytes, int] = {}
        got = tokenize_many(texts, parts)
    assert [a.tolist() for a in got] == [a.tolist() for a in want]
    assert list(parts.items()) == list(whole.items())


@PROPS
@given(
    pairs=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 40)), max_size=80),
    n_rows=st.integers(7, 9),
)
def test_postings_group_each_rows_members_ascending_once(
    pairs: list[tuple[int, int]], n_rows: int
) -> None:
    """:meth:`Csr.build` (one key per pair, sorted in place) gives each row its
    members ascending, a repeated pair once, and every row its bounds, also rows
    with no member: what grouping the pairs by hand gives."""
    from kgai_tui.core.recall.fields import Csr

    pairs.sort(key=lambda p: p[1])  # members arrive ascending, as tokens do
    rows = np.array([r for r, _ in pairs], dtype=np.int64)
    members = np.array([m for _, m in pairs], dtype=np.int32)
    csr = Csr.build(rows, members, n_rows)
    want = [sorted({m for r, m in pairs if r == row}) for row in range(n_rows)]
    got = [csr.members[csr.ptr[r] : csr.ptr[r + 1]].tolist() for r in range(n_rows)]
    assert got == want
    assert csr.ptr.dtype == np.int64 and csr.members.dtype == np.int32


@PROPS
@given(
    texts=TEXTS,
    ascii_words=st.lists(
        st.from_regex(r"[A-Za-z0-9 ]{0,20}", fullmatch=True), max_size=12
    ),
    cuts=st.lists(st.integers(0, 40), max_size=4),
)
def test_fields_built_from_runs_of_rows_equal_whole_columns(
    texts: list[str], ascii_words: list[str], cuts: list[int]
) -> None:
    """A segment tokenizes its texts a run of rows at a time: any split into runs
    (non-ASCII texts, repeats and empty runs among them) gives the vocabulary and
    the postings of whole columns."""
    from kgai_tui.core.recall.fields import Fields

    titles = ascii_words + texts + ascii_words[:2]
    rationales = list(reversed(titles))
    n = len(titles)
    bounds = sorted({0, n, *(min(c, n) for c in cuts)})

    def runs(column: list[str]) -> list[list[str]]:
        return [column[a:b] for a, b in itertools.pairwise(bounds)]

    whole = Fields([(3.0, titles), (1.0, rationales)], n)
    split = Fields.chunked([(3.0, runs(titles)), (1.0, runs(rationales))], n)

    def parts(f: Fields) -> list[object]:
        out: list[object] = [
            (length, b.toks.tolist()) for length, b in sorted(f.vocab.buckets.items())
        ]
        out += [(w, c.ptr.tolist(), c.members.tolist()) for w, c in f.fields]
        return out

    assert parts(split) == parts(whole)
    with pytest.raises(ValueError, match="rows"):
        Fields.chunked([(3.0, [titles])], n + 1)


def test_tokens_of_repeated_texts_are_gathered_in_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Texts that repeat take their distinct text's tokens a block of texts at a
    time; any block size gives the arrays of one pass."""
    texts = [f"alpha beta {i % 5} gammaDelta" for i in range(23)] + ["", "beta"]
    whole: dict[bytes, int] = {}
    want = [a.tolist() for a in tokenize_many(texts, whole)]
    for block in (1, 2, 7):
        monkeypatch.setattr(recall_tokens, "_EXPAND_TEXTS", block)
        got = [a.tolist() for a in tokenize_many(texts, {})]
        assert got == want, block


def test_tokenize_many_camel_case_and_stopwords() -> None:
    texts = ["InvoiceRendering HTMLParser aB a1B", "The Order OF x", "fooBarBaz", ""]
    vocab: dict[bytes, int] = {}
    owner, tid = tokenize_many(texts, vocab)
    names = {i: t.decode() for t, i in vocab.items()}
    got = [
        sorted(names[t] for o, t in zip(owner, tid, strict=True) if o == i)
        for i in range(4)
    ]
    assert got == [sorted(tokenize(t)) for t in texts]


# --------------------------------------------------------------------------- vocabulary

TOKEN_CHARS = st.sampled_from([*"abde01", "é", "ß", "中"])
TOKENS = st.text(TOKEN_CHARS, min_size=1, max_size=9)


def _variants(tok: str) -> list[str]:
    """Tokens one edit, a prefix or a substring away from ``tok``."""
    out = [tok, tok[:-1], tok[1:], tok + "a", "a" + tok, tok[:3], tok[:4] + "zz"]
    for i in range(len(tok)):
        out.append(tok[:i] + "b" + tok[i + 1 :])
        out.append(tok[:i] + tok[i + 1 :])
        out.append(tok[:i] + "d" + tok[i:])
    return [t for t in out if t]


@PROPS
@given(vocab=st.lists(TOKENS, max_size=60), queries=st.lists(TOKENS, max_size=6))
def test_vocab_matches_every_nonzero_strength(
    vocab: list[str], queries: list[str]
) -> None:
    words = list(dict.fromkeys(vocab + [v for w in vocab[:5] for v in _variants(w)]))
    index = {w.encode(): i for i, w in enumerate(words)}
    v = Vocab(index)
    back = {
        int(v.remap[i]): w.encode()
        for w, i in zip(words, range(len(words)), strict=True)
    }
    for q in queries + [v2 for w in vocab[:3] for v2 in _variants(w)]:
        qb = q.encode()
        got = {back[t]: s for t, s in v.matches(qb)}
        want = {w.encode(): strength(qb, w.encode()) for w in words}
        assert got == {w: s for w, s in want.items() if s > 0}


@PROPS
@given(
    words=st.lists(
        st.text(st.sampled_from("ab9"), min_size=1, max_size=6), max_size=40
    ),
    query=st.text(st.sampled_from("ab9"), min_size=1, max_size=4),
)
def test_bucket_containing_finds_no_match_across_tokens(
    words: list[str], query: str
) -> None:
    """The substring scan runs over the tokens end to end: a find that starts in one
    token and ends in the next (``ab`` + ``ba`` holds ``bb``) is no match, built or
    stored alike."""
    v = Vocab({w.encode(): i for i, w in enumerate(dict.fromkeys(words))})
    stored = Vocab.from_buckets(
        len(v), [Bucket.from_parts(*b.parts()) for b in v.buckets.values()]
    )
    # Files written before the byte sets were kept: the scan rules buckets out.
    older = Vocab.from_buckets(
        len(v), [Bucket.from_parts(*b.parts()[:5]) for b in v.buckets.values()]
    )
    qb = query.encode()
    for vocab in (v, stored, older, _mapped(v)):
        for bucket in vocab.buckets.values():
            toks = [bytes(t) for t in bucket.toks]
            assert bucket.containing(qb) == [k for k, t in enumerate(toks) if qb in t]


def _mapped(v: Vocab) -> Vocab:
    """``v`` with every bucket's tokens a view of a mapped buffer, scanned in place."""
    buckets = []
    for b in v.buckets.values():
        length, first, toks, rev, pos, present = b.parts()
        room = mmap.mmap(-1, 64 + max(toks.nbytes, 1))
        room[64 : 64 + toks.nbytes] = toks.tobytes()
        view = np.frombuffer(room, dtype=toks.dtype, count=len(toks), offset=64)
        mapped = Bucket.from_parts(length, first, view, rev, pos, present)
        assert mapped.blob.held == 0  # searched where it lies, not copied
        buckets.append(mapped)
    return Vocab.from_buckets(len(v), buckets)


@PROPS
@given(
    words=st.lists(st.text(st.sampled_from("ab9é"), min_size=1), max_size=30),
    query=st.binary(min_size=1, max_size=3),
)
def test_a_bucket_knows_which_bytes_its_tokens_hold(
    words: list[str], query: bytes
) -> None:
    """The byte set rules a bucket out exactly when some byte of the query is in
    none of its tokens (no token is read then)."""
    v = Vocab({w.encode(): i for i, w in enumerate(dict.fromkeys(words))})
    for bucket in v.buckets.values():
        held = set(b"".join(bytes(t) for t in bucket.toks))
        assert bucket.present is not None
        got = {c for c in range(256) if bucket.present[c >> 3] >> (c & 7) & 1}
        assert got == held
        if not set(query) <= held:
            assert bucket.containing(query) == []
            assert bucket._blob is None  # never read


# --------------------------------------------------------------------------- synthetic projections


def make_projection(
    decisions: Sequence[tuple[str, str, str, Sequence[int]]],
    elements: Sequence[tuple[str, str, str]],
) -> Projection:
    """A projection filled by hand: elements ``e0..``, decisions shaping them."""
    p = Projection()
    for k, (kind, name, props) in enumerate(elements):
        p.graph.add_node(f"e{k}", kind=kind, name=name, props=props)
    for title, rationale, summary, shapes in decisions:
        add_decision(p, title, rationale, summary, shapes)
    return p


def add_decision(
    p: Projection, title: str, rationale: str, summary: str, shapes: Sequence[int]
) -> int:
    idx = p._new_decision(f"d{len(p.dec_id)}")
    p.dec_title[idx], p.dec_rationale[idx], p.dec_summary[idx] = (
        title,
        rationale,
        summary,
    )
    for k in dict.fromkeys(shapes):
        eid = f"e{k}"
        if eid not in p.graph:
            p.graph.add_node(eid, kind="", name="", props="")
        p.el_shapes.setdefault(eid, {})[idx] = True
        p.dec_shapes.add(idx, eid)
    p.applied_count += 1
    return idx


WORDS = st.one_of(
    TOKENS,
    st.sampled_from(
        ["decision", "bench", "reshape", "E000123", "igen0001", "the", "by", "x", "ab"]
    ),
)
TEXT = st.lists(WORDS, max_size=5).map(" ".join)
DECISIONS = st.lists(
    st.tuples(
        TEXT,
        TEXT,
        st.one_of(st.just(""), TEXT),
        st.lists(st.integers(0, 7), max_size=3),
    ),
    max_size=25,
)
PATHS = st.sampled_from(["src/a/*", "src/b", "lib/**", "/*", "docs/x.md", "src"])
ELEMENTS = st.lists(
    st.tuples(
        st.sampled_from(["feature", "service", ""]),
        TEXT,
        st.tuples(TEXT, st.lists(PATHS, max_size=2)).map(
            lambda tp: "\n".join(
                x
                for x in (f"note={tp[0]}", "paths=" + ", ".join(tp[1]) if tp[1] else "")
                if x
            )
        ),
    ),
    min_size=1,
    max_size=8,
)
QUERY = st.lists(st.one_of(WORDS, TOKENS), max_size=4)


@PROPS
@given(
    decisions=DECISIONS,
    elements=ELEMENTS,
    query=QUERY,
    paths=st.lists(PATHS, max_size=2),
)
def test_synthetic_projection_is_exact(
    decisions: list[tuple[str, str, str, list[int]]],
    elements: list[tuple[str, str, str]],
    query: list[str],
    paths: list[str],
) -> None:
    p = make_projection(decisions, elements)
    ix = RecallIndex.from_projection(p)
    q_toks = tokenize(" ".join(query))
    assert_exact(ix, p, q_toks, paths)
    assert_exact(ix, p, q_toks + q_toks[:1], paths)  # a repeated query token
    assert_exact(ix, p, [], paths)
    # Raw tokens, not through tokenize: short, stopwords, one-edit variants.
    assert_exact(ix, p, [*query, *(v for w in query[:1] for v in _variants(w))])


def test_empty_projection() -> None:
    p = Projection()
    ix = RecallIndex.from_projection(p)
    assert ix.boost(["x"]) == {}
    assert ix.relevances(["src"], ["decision"]) == {}


# --------------------------------------------------------------------------- freshness


def test_appends_placeholders_and_new_shapes_are_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(recall_index, "DELTA_MAX", 3)
    p = make_projection(
        [
            ("decision alpha", "bench", "", [0]),
            ("", "", "", []),
            ("beta", "x", "", [1]),
        ],
        [("feature", "Alpha", "k=v"), ("feature", "Beta", "paths=src/b")],
    )
    ix = RecallIndex.from_projection(p)
    queries = [tokenize(t) for t in ("alpha", "beta gamma", "decision bench", "gamma")]
    for q in queries:
        assert_exact(ix, p, q, ["src/b"])
    # A placeholder gets text and shapes; an old decision gains a shape.
    p.dec_title[1] = "gamma"
    p.dec_shapes.add(1, "e0")
    p.el_shapes["e0"][1] = True
    p.dec_shapes.add(2, "e0")
    p.el_shapes["e0"][2] = True
    p.applied_count += 1
    for q in queries:
        assert_exact(ix, p, q)
    # Appends: through the delta, into new segments, merged.
    for n in range(20):
        add_decision(p, f"gamma decision {n}", "bench", "", [n % 5])
        if n % 3 == 0:
            p.graph.nodes["e1"]["props"] = f"paths=src/b\nrev={n}"
        for q in queries:
            assert_exact(ix, p, q, ["src/b"])
    # Merged: every segment outweighs the newer ones together.
    sizes = [len(seg.decs) for seg in ix._segments]
    assert all(sizes[i] > sum(sizes[i + 1 :]) for i in range(len(sizes) - 1)), sizes
    assert len(sizes) < 6, sizes  # 23 decisions, five segments made


# --------------------------------------------------------------------------- stores

STORE_QUERIES = [
    "E000123",
    "E000012",
    "decision bench reshape",
    "bench decision reshape",
    "reshape",
    "decison",
    "igen",
    "batch rev 90",
    "feature",
    "zzzqqq",
    "x",
    "12 123 1234",
    "decision decision",
    "",
]


def test_generated_store_is_exact(tmp_path: Path) -> None:
    write_store(tmp_path / "kg", GenParams(3000, 7, 500))
    p = open_engine(tmp_path / "kg").projection
    ix = RecallIndex.from_projection(p)
    for about in STORE_QUERIES:
        assert_exact(ix, p, tokenize(about))


def test_generated_store_replayed_in_steps_is_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_index, "DELTA_MAX", 150)
    write_store(tmp_path / "kg", GenParams(2000, 5, 300))
    events = open_engine(tmp_path / "kg").events
    p = Projection()
    p.apply_all(events[:1000])
    ix = RecallIndex.from_projection(p)
    for start in range(1000, 2000, 250):
        p.apply_all(events[start : start + 250])
        for about in ("E000123 reshape", "decision bench", "igen0000"):
            assert_exact(ix, p, tokenize(about))


@pytest.fixture(scope="module")
def demo_projection(tmp_path_factory: pytest.TempPathFactory) -> Projection:
    target = tmp_path_factory.mktemp("demo") / "store"
    shutil.copytree(DEMO_STORE, target)
    # Module-scoped: not yet under the per-test home, so a cache dir of its own.
    return open_engine(target).projection


def test_demo_store_is_exact(demo_projection: Projection) -> None:
    p = demo_projection
    ix = RecallIndex.from_projection(p)
    nodes = p.graph.nodes
    stored = sorted(
        {
            path
            for e in nodes
            for line in nodes[e]["props"].split("\n")
            if line.startswith("paths=")
            for path in split_paths(line[6:])
        }
    )
    assert stored, "the demo store has elements with paths"
    words = sorted({t for e in nodes for t in tokenize(nodes[e]["name"])})
    titles = [tokenize(t) for t in p.dec_title[:30]]
    queries = [[w] for w in words] + titles + [[], ["x"], ["checkout", "checkout"]]
    for q in queries:
        assert_exact(ix, p, q)
    for path in [*stored[:10], "services/checkout/order/x.py", "apps", "nothing/here"]:
        assert_exact(ix, p, tokenize("checkout payment"), [path])
        assert_exact(ix, p, [], [path, "infra/postgres/x"])


@PROPS
@given(
    decisions=DECISIONS,
    elements=ELEMENTS,
    query=QUERY,
    paths=st.lists(PATHS, max_size=2),
    lamports=st.lists(st.integers(-3, 3), min_size=25, max_size=25),
    limit=st.integers(1, 6),
)
def test_recall_cut_equals_a_full_sort(
    decisions: list[tuple[str, str, str, list[int]]],
    elements: list[tuple[str, str, str]],
    query: list[str],
    paths: list[str],
    lamports: list[int],
    limit: int,
) -> None:
    """Recall ranks only what can make the cut; the cut is a full sort's, ties and
    all (relevance, then the latest authority's lamport, then the id)."""
    p = make_projection(decisions, elements)
    for idx in range(len(p.dec_id)):  # few distinct lamports: many ties
        p.dec_lamport[idx] = lamports[idx % len(lamports)]
    p._max_auth = None
    q_toks = tokenize(" ".join(query))
    if not (paths or q_toks):
        return
    about = " ".join(query)
    got = context_obj(p, paths=paths, about=about, limit=limit)
    boost = decision_boost(p, q_toks)
    rows = sorted(
        (
            (rel, p.max_authority_lamport(e), e)
            for e in p.graph.nodes
            if (rel := relevance(p, e, paths, q_toks, boost)) >= 1
        ),
        key=lambda r: (-r[0], -r[1], r[2]),
    )
    assert got["total"] == len(rows)
    assert [(i["element_id"], i["score"]) for i in got["items"]] == [
        (e, rel) for rel, _, e in rows[:limit]
    ]
