"""Sparse decision scoring (a rare query scores only the decisions its postings
hold) gives the floats the dense arrays give, bit for bit (issue 17: at 10M
decisions the dense arrays made ``context`` cost 526 MB).

Every property runs the index twice, once forced dense and once forced sparse,
against the scan (``assert_exact``), and compares the two modes' answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_recall_index import (
    DECISIONS,
    ELEMENTS,
    PATHS,
    QUERY,
    TEXT,
    add_decision,
    assert_exact,
    make_projection,
)

from kgai_tui.core.recall import segments as recall_segments
from kgai_tui.core.recall.fields import Fields
from kgai_tui.core.recall.index import RecallIndex
from kgai_tui.core.recall.scoring import tokenize

PROPS = settings(max_examples=60, deadline=None)


@PROPS
@given(
    rows=st.lists(st.tuples(TEXT, TEXT), max_size=30),
    query=QUERY,
    budget=st.integers(0, 60),
)
def test_sparse_scores_are_the_dense_scores(
    rows: list[tuple[str, str]], query: list[str], budget: int
) -> None:
    fields = Fields(
        [(3.0, [a for a, _ in rows]), (1.0, [b for _, b in rows])], len(rows)
    )
    q_toks = tokenize(" ".join(query)) + query[:1]
    dense = fields.score(q_toks)
    sparse = fields.sparse_score(q_toks, budget)
    if sparse is None:  # past the budget: the caller goes dense
        return
    full = np.zeros(len(rows)) if dense is None else dense
    got = np.zeros(len(rows))
    got[sparse.rows] = sparse.vals
    assert got.tobytes() == full.tobytes()
    assert (np.diff(sparse.rows) > 0).all()
    picked = np.arange(len(rows), dtype=np.int64)[::2]
    assert sparse.at(picked).tobytes() == full[picked].tobytes()


#: (_SPARSE_MIN, _SPARSE_SHARE): every segment dense, or every one sparse.
MODES = {"dense": (0, 2**62), "sparse": (2**62, 16)}


@contextmanager
def forced(mode: str) -> Iterator[None]:
    low, share = MODES[mode]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(recall_segments, "_SPARSE_MIN", low)
        m.setattr(recall_segments, "_SPARSE_SHARE", share)
        yield


@PROPS
@given(
    decisions=DECISIONS,
    elements=ELEMENTS,
    query=QUERY,
    paths=st.lists(PATHS, max_size=2),
    later=DECISIONS,
)
def test_both_modes_equal_the_scan(
    decisions: list[tuple[str, str, str, list[int]]],
    elements: list[tuple[str, str, str]],
    query: list[str],
    paths: list[str],
    later: list[tuple[str, str, str, list[int]]],
) -> None:
    q_toks = tokenize(" ".join(query))
    for mode in MODES:
        with forced(mode):
            p = make_projection(decisions, elements)
            ix = RecallIndex.from_projection(p)
            assert_exact(ix, p, q_toks, paths)
            assert_exact(ix, p, q_toks + q_toks[:1], paths)
            # Decisions appended after the segment was built (the delta): both
            # modes still equal the scan.
            for title, rationale, summary, shapes in later[:3]:
                add_decision(p, title, rationale, summary, shapes)
            ix.refresh()
            assert_exact(ix, p, q_toks, paths)


@PROPS
@given(decisions=DECISIONS, elements=ELEMENTS, query=QUERY)
def test_the_best_decision_is_the_same_in_both_modes(
    decisions: list[tuple[str, str, str, list[int]]],
    elements: list[tuple[str, str, str]],
    query: list[str],
) -> None:
    p = make_projection(decisions, elements)
    q_toks = tokenize(" ".join(query))
    answers = []
    for mode in MODES:
        with forced(mode):
            ix = RecallIndex.from_projection(p)
            ix.boost(q_toks)
            answers.append([ix.best_decision(q_toks, e) for e in p.graph.nodes])
    assert answers[0] == answers[1]
