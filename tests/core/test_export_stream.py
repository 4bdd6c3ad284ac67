"""The export printed a chunk at a time equals the export printed whole.

``export`` at a million decisions is 300 MB of JSON; it is printed as it is read
(:func:`kgai_tui.core.reads.export.export_chunks`) from the model's tables in print
order (:class:`kgai_tui.core.model.export.ModelExport`). These tests hold the
streamed bytes to Go's ``MarshalIndent`` of the whole object (as every other answer
is encoded), whatever the chunks and whatever the text, and the model's streamed
export to the whole store's, across batch edges.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kgai_tui.core.model.export as model_export
from kgai_tui.core.answers.answer import Answer, encode, with_pending
from kgai_tui.core.answers.kg import export_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import KgaiError
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.reads.export import PARTS, export_chunks, export_digest
from kgai_tui.demo import DEMO_STORE

#: Text that Go escapes, that orjson does not, and that must not reach a terminal.
HOSTILE = st.text(
    alphabet=st.sampled_from(
        [*list('ab<>&"\\/é'), "\u2028", "\u2029", "\x1b", "\x7f", "\x85", "\n", "😀"]
    ),
    max_size=8,
)


class ListSource:
    """An export source over rows held in lists, cut into the given chunks."""

    def __init__(self, parts: dict[str, list[dict[str, Any]]], cuts: list[int]):
        self.parts, self.cuts = parts, cuts

    def _chunked(self, rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        out, i = [], 0
        for n in self.cuts * (len(rows) + 1):
            if i >= len(rows):
                break
            out.append(rows[i : i + n])
            out.append([])  # an empty chunk prints nothing
            i += n
        return out

    def elements(self) -> list[list[dict[str, Any]]]:
        return self._chunked(self.parts["elements"])

    def links(self) -> list[list[dict[str, Any]]]:
        return self._chunked(self.parts["links"])

    def decisions(self) -> list[list[dict[str, Any]]]:
        return self._chunked(self.parts["decisions"])

    def shapes(self) -> list[list[dict[str, Any]]]:
        return self._chunked(self.parts["shapes"])


parts_strategy = st.fixed_dictionaries(
    {
        "elements": st.lists(
            st.fixed_dictionaries(
                {"id": HOSTILE, "kind": HOSTILE, "name": HOSTILE, "props": HOSTILE}
            ),
            max_size=6,
        ),
        "links": st.lists(
            st.fixed_dictionaries({"f": HOSTILE, "k": HOSTILE, "t": HOSTILE}),
            max_size=4,
        ),
        "decisions": st.lists(
            st.fixed_dictionaries(
                {
                    "id": HOSTILE,
                    "lamport": st.integers(0, 2**63 - 1),
                    "title": HOSTILE,
                }
            ),
            max_size=6,
        ),
        "shapes": st.lists(
            st.fixed_dictionaries(
                {"authority": st.booleans(), "decision": HOSTILE, "element": HOSTILE}
            ),
            max_size=6,
        ),
    }
)


@settings(max_examples=150, deadline=None)
@given(
    parts=parts_strategy,
    cuts=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    canonical=st.booleans(),
    pending=st.sampled_from(["", "/repo/.kgairc", "<&>\u2028\x1b"]),
)
def test_streamed_bytes_equal_the_whole_object_encoded(
    parts: dict[str, list[dict[str, Any]]],
    cuts: list[int],
    canonical: bool,
    pending: str,
) -> None:
    """Go's MarshalIndent of ``{ok, elements, links, decisions, shapes, digest}``
    (controls escaped as in every answer), byte for byte, however it is cut."""
    whole: dict[str, Any] = {"ok": True, **{p: parts[p] or None for p in PARTS}}
    if canonical:
        whole["digest"] = export_digest(parts)
    want = with_pending(Answer(whole), pending)

    def stream(after: Any) -> Any:
        return export_chunks(ListSource(parts, cuts), after, canonical=canonical)

    got = with_pending(Answer({}, stream=stream), pending)
    assert encode(got) == encode(want)


def _demo_model(tmp_path: Path) -> tuple[Path, Path]:
    root, cache = tmp_path / "store", tmp_path / "cache"
    shutil.copytree(DEMO_STORE, root)
    open_model(root, cache).close()
    return root, model_path(root, cache)


@pytest.mark.parametrize("batch", [1, 2, 7, 64])
def test_model_export_across_batch_edges_equals_the_whole_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """The model's parts come in batches; their edges never show in the bytes."""
    root, path = _demo_model(tmp_path)
    monkeypatch.setattr(model_export, "_BATCH", batch)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    model = ModelEngine(root, db, "warm", [], path)
    whole = open_engine(root)
    for canonical in (False, True):
        got = encode(export_answer(lambda: model, canonical=canonical))
        assert got == encode(export_answer(lambda: whole, canonical=canonical))
    db.close()


def test_a_model_that_fails_half_way_is_one_clear_error(tmp_path: Path) -> None:
    """Rows lost after the check (a file that stops reading right) end the export
    with one line saying the output is incomplete, not a traceback or a wrong
    digest."""
    root, path = _demo_model(tmp_path)
    db = sqlite3.connect(path)
    model = ModelEngine(root, db, "warm", [], path)
    answer = export_answer(lambda: model, canonical=True)
    with db:
        db.execute("DELETE FROM dec WHERE ix % 2 = 0")
    with pytest.raises(KgaiError) as caught:
        encode(answer)
    message = str(caught.value)
    assert "incomplete" in message and "\n" not in message
    db.close()
