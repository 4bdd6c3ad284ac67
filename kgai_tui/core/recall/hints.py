"""Vocabulary hints: when a recall finds little, the store's own element names
nearest to the topic, so a missed phrasing costs one retry instead of five.

A recall answer is *thin* when fewer than :data:`THIN` elements pass its filter and
it has topic words. Such an answer gets a ``hints`` list (at most
:data:`HINT_CAP`, best first) of the elements the filter left out that come
nearest to the topic. Everything is computed from what the store holds, with no
model: the same store and query give the same hints on every machine.

The algorithm (docs/agents.md, "Hints", is its reference):

1. **Near misses.** Every element's recall relevance ``rel`` is at hand (the
   recall index computes it for the answer): ``6 x about + 5 x boost``, where
   ``about`` grades the element's name, kind and props (``paths`` included) and
   ``boost`` the best decision shaping it (title, rationale), token by token with
   the reference ``matchStrength`` (equal, shared prefix, substring, one byte
   edit). An element with ``0 < rel < 1`` shares some word, or a near form of one,
   with the topic, but too weakly to pass the filter.
2. **Initials.** For every run of 2 to :data:`INITIALS_MAX` consecutive topic
   tokens, their first characters spell initials (``content delivery network`` ->
   ``cdn``). An element whose whole name is one token equal to the initials, or to
   the initials plus ``s`` (``SLOs``), gains ``6 x n / len(tokens)`` for a run of
   ``n`` tokens: as if those ``n`` tokens had matched its name exactly. Each
   element keeps its largest gain (the longest, then leftmost, run).
3. **The bridge** (:mod:`.bridge`): WordNet's synonyms and broader terms of each
   topic word, scored against the store, add their bridged score.
4. **Candidates** are the named elements with ``rel < 1`` (not in the answer)
   and ``hint = rel + initials gain + bridged > 0``.
5. **Order**, total: ``hint`` descending, then the latest authority's lamport
   descending, then the element id ascending (recall's own order). The first
   :data:`HINT_CAP` are kept.
6. **Why**, one line per hint: the initials; or, when the bridge gave more than
   ``rel``, the WordNet word it took and why that word reaches the element;
   or the element's own words (when its name, kind and props give at least half
   of ``rel``), or else the decision shaping it that scores best for the topic
   (ties: the newest, lamport then id), each with the store's words that matched
   and the topic words they matched.

What was measured and left out (docs/agents.md): English stemming added no
question on the paraphrase set (``matchStrength``'s prefix rule already joins
queue/queues, invoice/invoicing), so recall does not load a stemmer.

Cost: step 1 is free (the answer's relevance array), step 2 is a few exact
vocabulary lookups, steps 3-4 partition the candidates to those scoring at least
the 8th best score and read only their lamports (all 10,000 elements at 1M
decisions when every one is a tied near miss: the worst case, a few ms), and
step 5 touches at most :data:`HINT_CAP` elements (the best decision comes from the
per-decision scores the index just computed; its ties read the tied decisions'
lamports). No decision is scanned per query. Measured: ``benchmarks/hints_cost.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kgai_tui.core.recall.scoring import (
    ABOUT_WEIGHT,
    about_score,
    decision_about_score,
    match_strength,
    one_line,
    tokenize,
)

if TYPE_CHECKING:
    from kgai_tui.core.recall.bridge import Bridged
    from kgai_tui.core.recall.index import RecallIndex
    from kgai_tui.core.recall.tokens import F64, I64
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "HINT_CAP",
    "INITIALS_MAX",
    "THIN",
    "Hint",
    "hints",
    "initials_runs",
    "is_thin",
]

#: An answer with fewer elements passing its filter than this is thin.
THIN: Final = 3
#: At most this many hints.
HINT_CAP: Final = 8
#: Initials are taken over runs of 2 to this many consecutive topic tokens.
INITIALS_MAX: Final = 6


@dataclass(frozen=True, slots=True)
class Hint:
    """One hint: an element the filter left out, and why it is near the topic."""

    element_id: str
    kind: str
    name: str
    why: str

    def obj(self) -> dict[str, str]:
        """The JSON object: ``{kind, name, element_id, why}``."""
        return {
            "kind": self.kind,
            "name": self.name,
            "element_id": self.element_id,
            "why": self.why,
        }


def is_thin(total: int, q_toks: Sequence[str]) -> bool:
    """Whether an answer with ``total`` elements passing the filter gets hints."""
    return bool(q_toks) and total < THIN


def initials_runs(q_toks: Sequence[str]) -> list[tuple[str, int, int]]:
    """``(initials, start, end)`` for every run of 2 to :data:`INITIALS_MAX`
    consecutive tokens, longest first, then leftmost."""
    n = len(q_toks)
    out: list[tuple[str, int, int]] = []
    for size in range(min(n, INITIALS_MAX), 1, -1):
        for start in range(n - size + 1):
            run = q_toks[start : start + size]
            out.append(("".join(t[0] for t in run), start, start + size))
    return out


def _initials_gains(
    p: ProjectionView, q_toks: Sequence[str], index: RecallIndex | None
) -> dict[str, tuple[float, str]]:
    """Element id -> (gain, the words whose initials its name is)."""
    gains: dict[str, tuple[float, str]] = {}
    names: dict[str, list[str]] | None = None
    for initials, start, end in initials_runs(q_toks):
        for token in (initials, initials + "s"):
            if index is not None:
                named = index.elements_named(token)
            else:
                if names is None:
                    names = {}
                    for eid in p.graph.nodes:
                        found = p.element(eid)
                        for tok in set(tokenize(found[1] if found else "")):
                            names.setdefault(tok, []).append(eid)
                named = names.get(token, [])
            for eid in named:
                found = p.element(eid)
                if eid in gains or found is None or tokenize(found[1]) != [token]:
                    continue
                gain = ABOUT_WEIGHT * (end - start) / len(q_toks)
                gains[eid] = (gain, " ".join(q_toks[start:end]))
    return gains


def _pairs(
    q_toks: Sequence[str], fields: Sequence[tuple[str, float, list[str]]]
) -> dict[str, list[tuple[str, str]]]:
    """Per field name, ``(store token, topic token)`` for each distinct topic token
    whose best ``strength x weight`` is in that field (ties: the first field, then
    the first token)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for q in dict.fromkeys(q_toks):
        best = 0.0
        where: tuple[str, str] | None = None
        for name, weight, toks in fields:
            for tok in toks:
                score = match_strength(q, tok) * weight
                if score > best:
                    best, where = score, (name, tok)
        if where is not None:
            out.setdefault(where[0], []).append((where[1], q))
    return out


def _said(pairs: list[tuple[str, str]]) -> str:
    return ", ".join(
        f'"{tok}"' if tok == q else f'"{tok}" for "{q}"' for tok, q in pairs
    )


def _why_fields(q_toks: Sequence[str], kind: str, name: str, blob: str) -> str:
    fields = [
        ("name", 3.0, tokenize(name)),
        ("kind", 2.0, tokenize(kind)),
        ("props", 1.0, tokenize(blob)),
    ]
    pairs = _pairs(q_toks, fields)
    verbs = {"name": "its name has", "kind": "its kind has", "props": "its props have"}
    return "; ".join(
        f"{verbs[f]} {_said(pairs[f])}" for f, _, _ in fields if f in pairs
    )


def _why_decision(p: ProjectionView, q_toks: Sequence[str], idx: int) -> str:
    title = p.dec_title[idx]
    fields = [
        ("title", 3.0, tokenize(title)),
        ("text", 1.0, tokenize(p.dec_rationale[idx] + " " + p.dec_summary[idx])),
    ]
    pairs = _pairs(q_toks, fields)
    said = [pair for f, _, _ in fields for pair in pairs.get(f, [])]
    return f'decision "{one_line(title)}" has {_said(said)}'


def _scan_best_decision(
    p: ProjectionView, q_toks: Sequence[str], eid: str
) -> int | None:
    """:meth:`RecallIndex.best_decision` by the reference scan (no index)."""
    found: list[tuple[float, int]] = []
    for i in p.el_shapes.get(eid, {}):
        score = decision_about_score(
            q_toks, p.dec_title[i], p.dec_rationale[i], p.dec_summary[i]
        )
        if score > 0:
            found.append((score, i))
    if not found:
        return None
    top = max(s for s, _ in found)
    lam, ids = p.dec_lamport, p.dec_id
    return min((i for s, i in found if s == top), key=lambda i: (-lam[i], ids[i]))


def _why(
    p: ProjectionView,
    q_toks: Sequence[str],
    eid: str,
    rel: float,
    initials: str,
    index: RecallIndex | None,
    at: int,
) -> str:
    if initials:
        return f'its name is the initials of "{initials}"'
    kind, name, blob = p.element(eid) or ("", "", "")
    about = ABOUT_WEIGHT * about_score(q_toks, kind, name, blob)
    if about > 0 and 2 * about >= rel:
        return _why_fields(q_toks, kind, name, blob)
    if index is not None:
        idx = index.best_decision(q_toks, eid, at)
    else:
        idx = _scan_best_decision(p, q_toks, eid)
    if idx is None:
        return _why_fields(q_toks, kind, name, blob)
    return _why_decision(p, q_toks, idx)


def _why_bridged(
    p: ProjectionView,
    bridge: Bridged,
    eid: str,
    index: RecallIndex | None,
    at: int,
) -> str:
    alt = bridge.alts[int(bridge.best[at])]
    rel = float(bridge.part[at]) / alt.weight
    said = f'"{alt.word}" ~ "{alt.lemma}" (WordNet {alt.relation})'
    return f"{said}; {_why(p, list(alt.toks), eid, rel, '', index, at)}"


def _first_in_order(
    p: ProjectionView, ids: Sequence[str], score: F64, cand: I64, want: int
) -> list[tuple[str, int]]:
    """The first ``want`` candidates in hint order: ``score`` descending, then the
    latest authority's lamport descending, then the element id ascending.

    Only what can be among the first is looked at: a partition keeps the
    candidates scoring at least the ``want``-th best score (all of a tie that
    crosses the cut); lamports are read only for those sharing their score with
    another (the lamport orders nothing else, and the model reads its lamport
    column on the first ask); a lexsort on (score, lamport) finds the ``want``-th
    key, and only the candidates with a key at least as good (the ties on both)
    are sorted by id in Python. Equal to sorting every candidate.
    """
    import numpy as np

    if len(cand) > want:
        s = score[cand]
        cut = len(s) - want
        cand = cand[s >= np.partition(s, cut)[cut]]
    eids = [ids[k] for k in cand.tolist()]
    s = score[cand]
    _, where, counts = np.unique(s, return_inverse=True, return_counts=True)
    tied = np.flatnonzero(counts[where] > 1)
    lam = np.zeros(len(cand), dtype=np.int64)
    lam[tied] = np.fromiter(
        map(p.max_authority_lamport, [eids[j] for j in tied.tolist()]),
        dtype=np.int64,
        count=len(tied),
    )
    if len(cand) > want:
        last = np.lexsort((lam, s))[len(cand) - want]  # both ascending: from the end
        keep = (s > s[last]) | ((s == s[last]) & (lam >= lam[last]))
        cand, s, lam = cand[keep], s[keep], lam[keep]
        eids = [ids[k] for k in cand.tolist()]
    ranked = sorted(
        zip((-s).tolist(), (-lam).tolist(), eids, cand.tolist(), strict=True)
    )
    return [(eid, k) for _, _, eid, k in ranked[:want]]


def hints(
    p: ProjectionView,
    q_toks: Sequence[str],
    ids: Sequence[str],
    rel: F64,
    index: RecallIndex | None,
    relevance_of: Callable[[Sequence[str]], F64] | None = None,
) -> list[Hint]:
    """The hints for a topic, best first (see the module doc for the algorithm).

    Args:
        p: the projection the answer was made from.
        q_toks: the topic's tokens (``tokenize(about)``).
        ids: every element id, in the order of ``rel``.
        rel: every element's recall relevance for this query.
        index: the recall index that computed ``rel``, or None (a scan).
        relevance_of: recall's relevance of every element, in the order of
            ``ids``, for other tokens and no paths (the bridge); None: no bridge.
    """
    if not q_toks or not len(ids):
        return []
    # Loaded here: importing this module (context does, for every command) loads
    # no NumPy.
    import numpy as np

    score = rel.copy()
    gains = _initials_gains(p, q_toks, index)
    if gains:
        pos = {e: k for k, e in enumerate(ids)}
        for eid, (gain, _) in gains.items():
            k = pos.get(eid)
            if k is not None:
                score[k] += gain
    bridge: Bridged | None = None
    if relevance_of is not None:
        from kgai_tui.core.recall.bridge import bridged

        bridge = bridged(q_toks, relevance_of, len(ids))
        own = score.copy()
        score += bridge.score
    cand = np.flatnonzero((rel < 1) & (score > 0))
    rows: list[tuple[str, int]] = []
    want = HINT_CAP
    while True:
        first = _first_in_order(p, ids, score, cand, want)
        rows = [(eid, k) for eid, k in first if (p.element(eid) or ("", "", ""))[1]]
        if len(rows) >= HINT_CAP or len(first) < want:
            break
        want *= 4  # unnamed elements took places: look further
    rows = rows[:HINT_CAP]
    out: list[Hint] = []
    for eid, k in rows:
        kind, name, _ = p.element(eid) or ("", "", "")
        initials = gains[eid][1] if eid in gains else ""
        if bridge is not None and not initials and bridge.score[k] > own[k]:
            why = _why_bridged(p, bridge, eid, index, k)
        else:
            why = _why(p, q_toks, eid, float(rel[k]), initials, index, k)
        out.append(Hint(eid, kind, name, why))
    return out
