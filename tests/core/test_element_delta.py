"""A stored element part plus a delta answers exactly what the part written again
would: every element's topic score, the elements a name token finds, and the path
scores, for elements changed, added, changed back, or left alone.

The model's property tests reach the delta through whole stores; here the part
and the delta are drawn directly, so a delta element's stored row that still
scores (or is still found by name) is caught even when no generated store
happens to hit it.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_graph_log import _log_rows
from test_model import append_files, assert_same, linked_store
from test_replay_properties import lines

from kgai_tui.core.model import recall_delta, recall_store
from kgai_tui.core.model.disk import read_meta
from kgai_tui.core.model.open import open_model
from kgai_tui.core.model.recall_delta import ElementDelta, stored_delta
from kgai_tui.core.recall.element_delta import DeltaElements
from kgai_tui.core.recall.segments import Elements
from kgai_tui.core.recall.tokens import utf8
from kgai_tui.core.replay.link_graph import LinkGraph

WORDS = ["billing", "bill", "ledger", "payment", "payments", "auth", "cache", "x"]
PATHS = ["src/billing/**", "src/auth/x.py", "docs/*"]

word_st = st.sampled_from(WORDS)
text_st = st.lists(word_st, max_size=3).map(" ".join)
props_st = st.one_of(
    st.just(""),
    text_st.map(lambda t: f"note={t}"),
    st.lists(st.sampled_from(PATHS), min_size=1, max_size=2).map(
        lambda ps: "paths=" + ",".join(ps)
    ),
)
attrs_st = st.tuples(
    st.sampled_from(["service", "feature", "billing"]), text_st, props_st
)
query_st = st.lists(st.sampled_from([*WORDS, "paymnt", "zzz"]), min_size=1, max_size=3)
query_paths_st = st.lists(
    st.sampled_from(["src/billing/a.py", "docs/x", "src/auth/x.py"])
)


def _elements(attrs: list[tuple[str, str, str]]) -> Elements:
    graph = LinkGraph()
    for k, (kind, name, props) in enumerate(attrs):
        graph.add_node(f"e{k}", kind=kind, name=name, props=props)
    return Elements(SimpleNamespace(graph=graph))  # type: ignore[arg-type]


def _same(a: Any, b: Any, n: int) -> bool:
    """Equal scores; ``None`` (no token matched) adds what zeros add."""
    zeros = np.zeros(n)
    return bool(np.array_equal(zeros if a is None else a, zeros if b is None else b))


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(attrs_st, min_size=1, max_size=12),
    changes=st.lists(st.tuples(st.integers(0, 11), attrs_st), max_size=6),
    added=st.lists(attrs_st, max_size=4),
    query=query_st,
    paths=query_paths_st,
)
def test_delta_answers_as_the_part_written_again(
    before: list[tuple[str, str, str]],
    changes: list[tuple[int, tuple[str, str, str]]],
    added: list[tuple[str, str, str]],
    query: list[str],
    paths: list[str],
) -> None:
    now = list(before)
    stale: set[int] = set()
    for k, attrs in changes:
        if k < len(before):
            now[k] = attrs
            stale.add(k)
    now += added
    part = Elements.from_part(_elements(before).part())
    new_ids = [f"e{k}" for k in range(len(before), len(now))]
    delta_attrs = [now[k] for k in sorted(stale)] + added
    delta = DeltaElements(part, sorted(stale), new_ids, delta_attrs)
    _answers_as(delta, _elements(now), query, paths)


def _answers_as(
    delta: Elements, whole: Elements, query: list[str], paths: list[str]
) -> None:
    n = len(whole.ids)
    assert delta.ids == whole.ids
    assert delta.attrs == whole.attrs
    assert _same(delta.about(query), whole.about(query), n)
    for word in query:
        assert delta.named(utf8(word)).tolist() == whole.named(utf8(word)).tolist()
    assert np.array_equal(delta.path_scores(paths), whole.path_scores(paths))


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(attrs_st, min_size=1, max_size=10),
    filed=st.lists(st.tuples(st.integers(0, 9), attrs_st), max_size=5),
    filed_added=st.lists(attrs_st, max_size=3),
    live=st.lists(st.tuples(st.integers(0, 12), attrs_st), max_size=5),
    live_added=st.lists(attrs_st, max_size=3),
    query=query_st,
    paths=query_paths_st,
)
def test_a_live_delta_over_a_filed_one_answers_as_the_part_written_again(
    before: list[tuple[str, str, str]],
    filed: list[tuple[int, tuple[str, str, str]]],
    filed_added: list[tuple[str, str, str]],
    live: list[tuple[int, tuple[str, str, str]]],
    live_added: list[tuple[str, str, str]],
    query: list[str],
    paths: list[str],
) -> None:
    """The delta file's elements (fields stored, as written) under the update's
    delta, whose changes may touch elements the file added."""
    from kgai_tui.core.recall.segments import element_fields

    n = len(before)
    mid = list(before)
    stale_f = sorted({k for k, _ in filed if k < n})
    for k, attrs in filed:
        if k < n:
            mid[k] = attrs
    mid += filed_added
    f_attrs = [mid[k] for k in stale_f] + filed_added
    f_ids = [f"e{k}" for k in range(n, len(mid))]
    base = Elements.from_part(_elements(before).part())
    layer = DeltaElements(base, stale_f, f_ids, f_attrs, element_fields(f_attrs))
    now = list(mid)
    stale_l = sorted({k for k, _ in live if k < len(mid)})
    for k, attrs in live:
        if k < len(mid):
            now[k] = attrs
    now += live_added
    l_ids = [f"e{k}" for k in range(len(mid), len(now))]
    top = DeltaElements(layer, stale_l, l_ids, [now[k] for k in stale_l] + live_added)
    _answers_as(top, _elements(now), query, paths)


def scored_elements(root: Path, cache: Path) -> tuple[list[str], list[Any]]:
    """The ids and attributes recall scores the model's elements by, in order:
    its element file under its delta file and its delta."""
    from kgai_tui.core.model.schema import model_path

    recall, delta = _recall(root, cache)
    els = recall_store._elements(model_path(root, cache), recall, delta)
    return list(els.ids), [tuple(a) for a in els.attrs]


def graph_elements(root: Path) -> tuple[list[str], list[Any]]:
    """The ids and attributes of a whole replay's elements, in graph order."""
    from kgai_tui.core.engine.open import open_engine

    nodes = open_engine(root).projection.graph.nodes
    return list(nodes), [(a["kind"], a["name"], a["props"]) for a in nodes.values()]


def _recall(root: Path, cache: Path) -> tuple[dict[str, Any], ElementDelta]:
    model = open_model(root, cache)
    try:
        return dict(read_meta(model.db, "recall")), stored_delta(model.db)
    finally:
        model.close()


@pytest.mark.parametrize("delta_max", [4096, 0])
def test_an_update_keeps_the_element_file_until_the_delta_is_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delta_max: int
) -> None:
    """Appends that change and add elements leave the element file as it was and
    name those elements; with no room for a delta, each writes the file again
    (and, the graph loaded for it, folds the graph's log). Every read after each
    equals a whole replay's."""
    monkeypatch.setattr(recall_delta, "ELEMENT_DELTA_MAX", delta_max)
    monkeypatch.setattr(recall_store, "DELTA_FILE_SHARE", 10**6)  # no delta file
    root, cache, w = linked_store(tmp_path)
    first = _recall(root, cache)[0]["elements"]["file"]
    for n in range(2, 6):
        append_files(root, {"i-one.ndjson": lines(w.events[n : n + 1])})
        model = open_model(root, cache)
        assert model.how == "append"
        assert_same(model, root)
        model.close()
        recall, delta = _recall(root, cache)
        if delta_max:
            assert recall["elements"]["file"] == first
            # F2 and S2, then one new service each; from d3 on, a stored
            # feature's props move.
            assert len(delta.new) == n
            assert bool(delta.stale) == (n >= 3)
            assert _log_rows(root, cache) == n - 1
        else:
            assert recall["elements"]["file"] != first
            assert not delta
            # The graph was loaded to write the file: its log was folded too.
            assert _log_rows(root, cache) == 0


def test_a_long_delta_goes_to_the_delta_file_and_the_element_file_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the delta's length, an update folds it into the delta file (written
    again each time, holding every element changed since the element file) and
    keeps the element file and the graph's log; once the delta file would hold
    more than its share of the elements, the element file is written again and
    the delta file goes. Every read after each equals a whole replay's, and the
    recall files on disk are those the model names (and the state before it)."""
    from builders import decision, upsert

    from kgai_tui.core.model.recall_files import listed, recall_dir
    from kgai_tui.core.model.schema import model_path

    monkeypatch.setattr(recall_delta, "ELEMENT_DELTA_MAX", 1)
    monkeypatch.setattr(recall_store, "DELTA_FILE_SHARE", 1)
    root, cache, w = linked_store(tmp_path)
    before = _recall(root, cache)[0]
    first = before["elements"]["file"]
    files = []
    for n in range(2, 6):  # d5 changes F2 again, which the delta file added
        append_files(root, {"i-one.ndjson": lines(w.events[n : n + 1])})
        model = open_model(root, cache)
        assert model.how == "append"
        assert_same(model, root)
        model.close()
        recall, delta = _recall(root, cache)
        assert recall["elements"]["file"] == first
        assert not delta, "the delta went into the delta file"
        files.append(recall["delta_file"]["file"])
        assert _log_rows(root, cache) == n - 1, "the graph was not loaded"
        # Read through both files, every element is as the log leaves it (F2,
        # added by d2's delta file, changed again by d5).
        assert scored_elements(root, cache) == graph_elements(root)
        # The files it names, and those the state before named (a reader of
        # that state may still open them; the next update removes them).
        on_disk = {p.name for p in recall_dir(model_path(root, cache)).iterdir()}
        assert on_disk == listed(recall) | listed(before)
        before = recall
    assert len(set(files)) == len(files), "written again each time"
    monkeypatch.setattr(recall_delta, "ELEMENT_DELTA_MAX", 0)
    monkeypatch.setattr(recall_store, "DELTA_FILE_SHARE", 10**6)
    w.add(
        decision("d6", [upsert("feature", "F0", step="6")]),
        lamport=7,
        recorded_at="2026-01-07T00:00:00Z",
    )
    append_files(root, {"i-one.ndjson": lines(w.events[6:])})
    model = open_model(root, cache)
    assert model.how == "append"
    assert_same(model, root)
    model.close()
    recall, delta = _recall(root, cache)
    assert recall["elements"]["file"] != first and "delta_file" not in recall
