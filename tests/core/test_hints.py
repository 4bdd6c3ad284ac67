"""Vocabulary hints (issue 20): the documented algorithm, on every read path.

The hints of a thin recall are held to a reference written here from the module's
documented rules (near misses of recall's own relevance, plus initials), on
generated stores with inflected, truncated and misspelt topics; and they are the
same bytes from the live projection (recall index), the scan (no index), the model
on disk (cold, warm, extended by appends) and any split of the events into shards.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

import pytest
from builders import ShardWriter, decision, set_prop, upsert, write_store
from hypothesis import given, settings
from hypothesis import strategies as st
from test_replay_properties import Chooser, lines, split_files

from kgai_tui.core.answers.answer import Answer, encode
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.disk import DiskProjection
from kgai_tui.core.model.open import open_model
from kgai_tui.core.reads import context
from kgai_tui.core.reads.context import context_obj, decision_boost, relevance
from kgai_tui.core.recall import index as recall_index
from kgai_tui.core.recall.bridge import (
    ALTERNATIVES,
    BROADER_WEIGHT,
    SENSES,
    SYNONYM_WEIGHT,
)
from kgai_tui.core.recall.hints import (
    HINT_CAP,
    INITIALS_MAX,
    THIN,
    initials_runs,
    is_thin,
)
from kgai_tui.core.recall.scoring import ABOUT_WEIGHT, tokenize
from kgai_tui.core.recall.wordnet import POS, wordnet
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.core.wire.model import Event, Mutation
from kgai_tui.demo import DEMO_STORE

SETTINGS = settings(max_examples=15, deadline=None)

# A vocabulary with inflections, shared prefixes and words one edit apart.
WORDS = [
    "invoice", "invoices", "invoicing", "billing", "queue", "queues", "search",
    "searching", "payment", "payments", "render", "rendering", "tax", "taxes",
    "cache", "caching", "log", "logging", "order", "orders", "event", "events",
    "kafka", "retry", "retries", "content", "delivery", "network", "service",
    "level", "objective", "cart", "card", "ship", "shipping", "stock", "token",
]  # fmt: skip
ACRONYMS = ["CDN", "SLOs", "API", "PDF", "CI"]
KINDS = ["service", "feature", "infra", "policy", "concept"]
NOISE = ["zeta", "omega", "quux", "plover", "xylem", "walrus"]
# Words the stores never use whose WordNet synonyms or broader terms are in WORDS.
BRIDGED = [
    "bill", "transport", "hoard", "lookup", "defrayal", "pushcart", "inventory",
    "stash", "depict", "consignment", "freight", "consequence",
]  # fmt: skip


# --------------------------------------------------------------------------- units


def test_initials_runs_longest_then_leftmost() -> None:
    assert initials_runs(["content", "delivery", "network"]) == [
        ("cdn", 0, 3),
        ("cd", 0, 2),
        ("dn", 1, 3),
    ]
    assert initials_runs(["one"]) == []
    long = [f"w{i}" for i in range(INITIALS_MAX + 3)]
    assert max(end - start for _, start, end in initials_runs(long)) == INITIALS_MAX


def test_thin_means_fewer_than_three_and_a_topic() -> None:
    assert THIN == 3
    assert is_thin(0, ["x"]) and is_thin(THIN - 1, ["x"])
    assert not is_thin(THIN, ["x"])
    assert not is_thin(0, [])


# --------------------------------------------------------------------------- demo


@pytest.fixture(scope="module")
def demo() -> ProjectionView:
    return open_engine(DEMO_STORE).projection


def test_a_missed_phrasing_gets_the_element_that_decided_it(
    demo: ProjectionView,
) -> None:
    out = context_obj(demo, paths=[], about="message queue")
    assert out["items"] == [] and out["total"] == 0
    assert list(out) == ["ok", "items", "shown", "omitted", "total", "hints"]
    first = out["hints"][0]
    assert list(first) == ["kind", "name", "element_id", "why"]
    assert (first["kind"], first["name"]) == ("infra", "EventBus")
    assert first["why"] == 'decision "Event bus moves to SQS" has "queues" for "queue"'
    retry = context_obj(demo, paths=[], about=first["name"])
    assert retry["items"][0]["name"] == "EventBus"
    assert "hints" not in retry


def test_initials_name_an_acronym_element(demo: ProjectionView) -> None:
    out = context_obj(demo, paths=[], about="content delivery network")
    assert out["hints"][0]["name"] == "CDN"
    assert out["hints"][0]["why"] == (
        'its name is the initials of "content delivery network"'
    )
    slo = context_obj(demo, paths=[], about="service level objectives")
    assert "SLOs" in [h["name"] for h in slo.get("hints", [])] or any(
        i["name"] == "SLOs" for i in slo["items"]
    )


def test_answers_that_matched_are_unchanged(demo: ProjectionView) -> None:
    """Items and the kg keys are what they were; only thin answers gain a key."""
    for about in ["invoice pdf", "database", "VAT rates", "zzzz qqqq", "kafka or sqs"]:
        out = context_obj(demo, paths=[], about=about)
        keys = list(out)
        base = [k for k in keys if k != "hints"]
        assert base == [
            k for k in ["ok", "items", "shown", "omitted", "total", "note"] if k in out
        ]
        assert ("hints" in out) == (out["total"] < THIN)
        if "hints" in out:
            assert keys[-1] == "hints"
            shown = {i["element_id"] for i in out["items"]}
            assert not shown & {h["element_id"] for h in out["hints"]}
            assert len(out["hints"]) <= HINT_CAP
    # No topic words, no hints: a paths-only answer and the whole graph.
    assert "hints" not in context_obj(demo, paths=["nowhere/at/all"], about="")
    assert "hints" not in context_obj(demo, paths=[], about="")


def test_the_why_names_the_element_s_own_words(demo: ProjectionView) -> None:
    out = context_obj(demo, paths=[], about="uptime targets")
    assert out["hints"][0]["name"] == "SLOs"
    assert out["hints"][0]["why"] == 'its props have "target" for "targets"'


# --------------------------------------------------------------------------- reference


def reference_hints(p: ProjectionView, about: str) -> list[str] | None:
    """The documented algorithm, written out plainly: element ids, best first."""
    q = tokenize(about)
    boost = decision_boost(p, q)
    rel = {e: relevance(p, e, [], q, boost) for e in p.graph.nodes}
    if not q or sum(r >= 1 for r in rel.values()) >= THIN:
        return None
    name = {e: (p.element(e) or ("", "", ""))[1] for e in p.graph.nodes}
    gain: dict[str, float] = {}
    for size in range(min(len(q), INITIALS_MAX), 1, -1):
        for start in range(len(q) - size + 1):
            initials = "".join(t[0] for t in q[start : start + size])
            for e in p.graph.nodes:
                if e not in gain and tokenize(name[e]) in (
                    [initials],
                    [initials + "s"],
                ):
                    gain[e] = ABOUT_WEIGHT * size / len(q)
    bridged = reference_bridge(p, q)
    score = {e: rel[e] + gain.get(e, 0.0) + bridged[e] for e in p.graph.nodes}
    cand = [e for e in p.graph.nodes if rel[e] < 1 and score[e] > 0 and name[e]]
    cand.sort(key=lambda e: (-score[e], -p.max_authority_lamport(e), e))
    return cand[:HINT_CAP]


def reference_bridge(p: ProjectionView, q: list[str]) -> dict[str, float]:
    """The bridge's documented steps (``recall/bridge.py``), written out plainly."""
    wn = wordnet()
    assert wn is not None
    total = dict.fromkeys(p.graph.nodes, 0.0)
    for word in dict.fromkeys(q):
        forms: list[str] = []
        for pos in POS:
            forms = wn.base_forms(word, pos)
            if forms:
                break
        same: list[str] = []
        broader: list[str] = []
        for form in forms:
            for offset in wn.offsets(form, pos)[:SENSES]:
                synset = wn.synset(pos, offset)
                same += synset.lemmas
                for symbol, ptr_pos, ptr_off in synset.pointers:
                    if symbol in ("@", "@i"):
                        broader += wn.synset(ptr_pos, ptr_off).lemmas
        best = dict.fromkeys(p.graph.nodes, 0.0)
        seen: set[str] = set()
        alts: list[tuple[list[str], float]] = []
        for lemmas, weight in ((same, SYNONYM_WEIGHT), (broader, BROADER_WEIGHT)):
            for lemma in lemmas:
                if lemma in seen:
                    continue
                seen.add(lemma)
                toks = tokenize(lemma.replace("_", " "))
                if toks and not set(toks) <= {word, *forms}:
                    alts.append((toks, weight))
        for toks, weight in alts[:ALTERNATIVES]:
            boost = decision_boost(p, toks)
            for e in p.graph.nodes:
                r = relevance(p, e, [], toks, boost)
                if r >= 1 and weight * r > best[e]:
                    best[e] = weight * r
        for e in p.graph.nodes:
            total[e] += best[e]
    return {e: v / len(q) for e, v in total.items()}


# --------------------------------------------------------------------------- stores


def _name(c: Chooser) -> str:
    if c.chance(20):
        return c.choice(ACRONYMS)
    words = [c.choice(WORDS) for _ in range(c.integer(1, 2))]
    return "".join(w.capitalize() for w in words)


def _text(c: Chooser, most: int) -> str:
    return " ".join(c.choice(WORDS + NOISE[:2]) for _ in range(c.integer(0, most)))


def generate_events(c: Chooser) -> list[Event]:
    """A small store over :data:`WORDS`: elements, titles, rationales, props."""
    elements = [(c.choice(KINDS), _name(c)) for _ in range(c.integer(2, 9))]
    writers = [ShardWriter(f"i-{k}") for k in range(c.integer(1, 3))]
    lamport = [0] * len(writers)
    for n in range(c.integer(3, 18)):
        muts: list[Mutation] = []
        for kind, name in c.subset(elements, 30) or [c.choice(elements)]:
            if c.chance(70):
                props = {}
                if c.chance(40):
                    props["paths"] = f"src/{c.choice(WORDS)}/*"
                if c.chance(30):
                    props["owner"] = c.choice(WORDS)
                muts.append(upsert(kind, name, **props))
            else:
                muts.append(set_prop(kind, name, "note", _text(c, 3)))
        if c.chance(10):
            muts = []
        d = decision(
            _text(c, 4) or "untitled",
            muts,
            rationale=_text(c, 8),
            summary=_text(c, 2) if c.chance(20) else "",
        )
        w = c.integer(0, len(writers) - 1)
        lamport[w] += c.integer(1, 2)
        writers[w].add(
            d, lamport=lamport[w], recorded_at=f"2026-03-{1 + n % 28:02d}T10:00:00Z"
        )
    return [ev for w in writers for ev in w.events]


def _perturb(c: Chooser, word: str) -> str:
    how = c.integer(0, 4)
    if how == 0 and len(word) > 4:
        return word[: c.integer(3, len(word) - 1)]  # a prefix
    if how == 1 and len(word) > 4:
        i = c.integer(1, len(word) - 2)
        return word[:i] + "x" + word[i + 1 :]  # one substitution
    if how == 2:
        return word + c.choice(["s", "ing", "ed"])  # an inflection
    return word


def topics(c: Chooser, events: list[Event]) -> list[str]:
    """Topics near the store's words, diluted so that answers come out thin."""
    out = []
    for _ in range(5):
        words = [_perturb(c, c.choice(WORDS)) for _ in range(c.integer(1, 2))]
        words += c.subset(NOISE, 50)
        if c.chance(50):
            words.append(c.choice(BRIDGED))
        words = c.permutation(words)
        if c.chance(40):
            # A contiguous run whose initials spell an acronym (some name it).
            acronym = c.choice(ACRONYMS).lower().rstrip("s")
            at = c.integer(0, len(words))
            words[at:at] = [f"{ch}{c.choice(NOISE)}" for ch in acronym]
        out.append(" ".join(words))
    return out


@contextmanager
def scratch() -> Iterator[Path]:
    top = Path(tempfile.mkdtemp(prefix="kgai-hints-"))
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def answer_bytes(p: ProjectionView | DiskProjection, about: str) -> bytes:
    """The printed answer (the model's projection is a view, typed on its own)."""
    return encode(
        Answer(context_obj(cast(ProjectionView, p), paths=[], about=about), floats=True)
    )


def scanned(p: ProjectionView, about: str, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The answer by the reference scan: no recall index at all."""
    with monkeypatch.context() as m:
        m.setattr(context, "recall_index_for", lambda _p: None)
        return answer_bytes(p, about)


@SETTINGS
@given(data=st.data())
def test_hints_follow_the_documented_algorithm_on_every_path(
    data: st.DataObject,
) -> None:
    c = Chooser(draw=data.draw)
    events = generate_events(c)
    asked = topics(c, events)
    names = ["a.ndjson", "b.ndjson", "c.ndjson", "d.ndjson"]
    mp = pytest.MonkeyPatch()
    with scratch() as top:
        one, two = top / "one", top / "two"
        write_store(one, split_files(c, events, names))
        write_store(two, split_files(c, events, names))
        live = open_engine(one).projection
        other = open_engine(two).projection
        cold = open_model(one, top / "cache")
        warm = open_model(one, top / "cache")
        assert warm.how == "warm"
        try:
            for about in asked:
                want = reference_hints(live, about)
                got = context_obj(live, paths=[], about=about)
                if want is None:
                    assert "hints" not in got, about
                else:
                    assert [h["element_id"] for h in got["hints"]] == want, about
                expected = answer_bytes(live, about)
                assert answer_bytes(other, about) == expected, about
                assert answer_bytes(cold.projection, about) == expected, about
                assert answer_bytes(warm.projection, about) == expected, about
                assert scanned(live, about, mp) == expected, about
        finally:
            cold.close()
            warm.close()
            mp.undo()


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_hints_are_the_same_after_appends_to_the_model(data: st.DataObject) -> None:
    """A model extended by appends (segments and a delta) gives the same hints."""
    c = Chooser(draw=data.draw)
    events = generate_events(c)
    asked = topics(c, events)
    cut = c.integer(1, len(events))
    with scratch() as top:
        root = top / "store"
        write_store(root, {"a.ndjson": b""})
        for part in (events[:cut], events[cut:]):
            with open(root / "log" / "a.ndjson", "ab") as fh:
                fh.write(lines(part))
            model = open_model(root, top / "cache")
            replay = open_engine(root).projection
            try:
                for about in asked:
                    assert answer_bytes(model.projection, about) == answer_bytes(
                        replay, about
                    ), about
            finally:
                model.close()


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_hints_are_the_same_when_the_live_index_catches_up(
    data: st.DataObject,
) -> None:
    """A live projection's index, built early and refreshed (a delta, then new
    segments), gives the hints of a projection replayed at once."""
    c = Chooser(draw=data.draw)
    events = generate_events(c)
    asked = topics(c, events)
    with scratch() as top, pytest.MonkeyPatch.context() as mp:
        mp.setattr(recall_index, "DELTA_MAX", 2)
        root = write_store(top / "s", {"a.ndjson": lines(events)})
        ordered = open_engine(root).events
        live = Projection()
        cut = c.integer(0, len(ordered))
        live.apply_all(ordered[:cut])
        for about in asked:
            context_obj(live, paths=[], about=about)  # builds the index
        for ev in ordered[cut:]:
            live.apply(ev)
            about = c.choice(asked)
            whole = Projection()
            whole.apply_all(ordered[: ordered.index(ev) + 1])
            assert answer_bytes(live, about) == answer_bytes(whole, about), about


# --------------------------------------------------------------------------- crowds
#
# The stores above hold at most 9 elements, so the cut at HINT_CAP and the ties
# that cross it are rare there. A crowd has many elements sharing a few words
# (every one a near miss with the same score), decisions upserting several of them
# at once (equal lamports, so the element id decides), and unnamed elements (a prop
# set before any upsert) scoring above the named ones: the selection must skip them
# and still find the first HINT_CAP named elements in the documented order.

CROWD_WORDS = ["ledger", "ledgers", "queue", "queues", "cache"]


def generate_crowd(c: Chooser) -> list[Event]:
    """Up to 60 elements over a few words, in multi-element decisions, plus ghosts."""
    named = [(c.choice(KINDS[:2]), f"Item{k}") for k in range(c.integer(HINT_CAP, 60))]
    ghosts = [("feature", f"Ghost{k}") for k in range(c.integer(0, 2 * HINT_CAP))]
    writers = [ShardWriter(f"i-{k}") for k in range(c.integer(1, 3))]
    lamport = [0] * len(writers)
    pending = c.permutation(named)
    n = 0
    while pending or n < 3:
        size = c.integer(1, 6)
        group, pending = pending[:size], pending[size:]
        muts: list[Mutation] = [
            upsert(kind, name, note=c.choice(CROWD_WORDS)) for kind, name in group
        ]
        for kind, name in c.subset(ghosts, 30):
            muts.append(set_prop(kind, name, "note", " ".join(CROWD_WORDS[:3])))
        d = decision(
            c.choice(["ledger entry", "queue entry", "cache entry", "untitled"]),
            muts or [upsert(*c.choice(named))],
            rationale=_text(c, 3),
        )
        # Each writer counts from 1: writers share lamports, and so do the
        # elements one decision upserts.
        w = c.integer(0, len(writers) - 1)
        lamport[w] += 1
        writers[w].add(d, lamport=lamport[w], recorded_at="2026-03-02T10:00:00Z")
        n += 1
    return [ev for w in writers for ev in w.events]


def crowd_topics(c: Chooser) -> list[str]:
    """A crowd word diluted by noise so that (nearly) nothing passes the filter."""
    return [
        " ".join(c.permutation([c.choice(CROWD_WORDS), *NOISE[: c.integer(1, 4)]]))
        for _ in range(4)
    ]


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_hints_of_a_crowd_follow_the_documented_order(data: st.DataObject) -> None:
    c = Chooser(draw=data.draw)
    events = generate_crowd(c)
    asked = crowd_topics(c)
    names = ["a.ndjson", "b.ndjson", "c.ndjson"]
    mp = pytest.MonkeyPatch()
    with scratch() as top:
        one, two = top / "one", top / "two"
        write_store(one, split_files(c, events, names))
        write_store(two, split_files(c, events, names))
        live = open_engine(one).projection
        other = open_engine(two).projection
        model = open_model(one, top / "cache")
        try:
            for about in asked:
                want = reference_hints(live, about)
                got = context_obj(live, paths=[], about=about)
                if want is None:
                    assert "hints" not in got, about
                    continue
                assert [h["element_id"] for h in got["hints"]] == want, about
                expected = answer_bytes(live, about)
                assert answer_bytes(other, about) == expected, about
                assert answer_bytes(model.projection, about) == expected, about
                assert scanned(live, about, mp) == expected, about
        finally:
            model.close()
            mp.undo()


def test_unnamed_elements_above_the_cut_are_skipped() -> None:
    """Twelve unnamed elements outscore twelve named ones: the hints are the first
    HINT_CAP named ones, lamport descending, then id ascending within a decision."""
    w = ShardWriter("i-0")
    items = [("feature", f"Item{k}") for k in range(12)]
    ghosts = [("feature", f"Ghost{k}") for k in range(12)]
    for at, start in enumerate(range(0, 12, 4)):
        muts = [
            upsert(kind, name, note="ledgers")
            for kind, name in items[start : start + 4]
        ]
        muts += [
            set_prop(kind, name, "note", "ledger")
            for kind, name in ghosts[start : start + 4]
        ]
        w.add(
            decision(f"batch {at}", muts),
            lamport=at + 1,
            recorded_at="2026-03-02T10:00:00Z",
        )
    with scratch() as top:
        root = write_store(top / "s", {"a.ndjson": lines(w.events)})
        live = open_engine(root).projection
        about = "ledger zzzz qqqq"
        ghost_ids = {
            e for e in live.graph.nodes if not (live.element(e) or ("", "", ""))[1]
        }
        assert len(ghost_ids) == 12
        assert isinstance(live, Projection)
        ids, rel = recall_index.recall_index_of(live).relevance_array(
            [], tokenize(about)
        )
        ghost_rel = {rel[k] for k, e in enumerate(ids) if e in ghost_ids}
        named_rel = {rel[k] for k, e in enumerate(ids) if e not in ghost_ids}
        assert min(ghost_rel) > max(named_rel) > 0 and max(ghost_rel) < 1
        got = [
            h["element_id"] for h in context_obj(live, paths=[], about=about)["hints"]
        ]
        assert got == reference_hints(live, about)
        assert not set(got) & ghost_ids and len(got) == HINT_CAP
        # The newest decision's four elements first (in id order), then the next.
        by_batch = [
            sorted(
                e
                for e in live.graph.nodes
                if e not in ghost_ids and live.max_authority_lamport(e) == lam
            )
            for lam in (3, 2)
        ]
        assert got == by_batch[0] + by_batch[1]
