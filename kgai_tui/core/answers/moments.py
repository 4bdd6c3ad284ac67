"""The answers of the reads at a moment: ``as-of`` (the MCP ``as_of`` tool) and ``diff``.

Timestamps are RFC3339 or ``YYYY-MM-DD`` (the end of that day, UTC); they are
checked before the store is opened, so a bad one is a usage error even without a
store.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kgai_tui.core.answers.answer import Answer
from kgai_tui.core.reads.kg import parse_as_of
from kgai_tui.core.reads.store import StoreSource, WholeSource, whole_of

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import KeptReads
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = ["as_of_answer", "diff_answer", "model_or_whole"]


def as_of_answer(
    engine: StoreSource, timestamp: str, whole: WholeSource | None = None
) -> Answer:
    """``as-of TIMESTAMP``: names, links, heads and conflicts as they stood then.

    ``engine`` may open the read model, which answers from its moments when they
    cover the cut (:mod:`kgai_tui.core.model.moments`); otherwise ``whole`` opens
    the whole store, its time index answers, and the model keeps the moments for
    the next read.

    Raises:
        UsageError: the timestamp is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.gosem.gotext import format_rfc3339

    cut = parse_as_of(timestamp)
    at = format_rfc3339(cut)

    def from_view(view: ProjectionView) -> dict[str, Any]:
        from kgai_tui.core.reads.as_of import as_of_obj  # only when the model cannot

        return as_of_obj(view, cut)

    return model_or_whole(
        engine,
        whole,
        lambda model: model.as_of_obj(int(cut.timestamp()), at),
        from_view,
        cut,
    )


def model_or_whole(
    engine: StoreSource,
    whole: WholeSource | None,
    ask_model: Callable[[KeptReads], dict[str, Any] | None],
    ask_view: Callable[[ProjectionView], dict[str, Any]],
    cut: datetime,
) -> Answer:
    """A read at ``cut``: from what the read model keeps when ``engine`` opens one
    and it answers (``ask_model`` gives ``None`` when it cannot); else from the
    as-of view of the store's time index (through the model, built from a replay
    of the log when none was saved; the whole store's when that is what
    ``engine`` opened), after which the model keeps the moments for the next read.
    ``whole`` answers only for a store with no index at all (a model held in
    memory)."""
    from kgai_tui.core.reads.store import held_time_index

    opened = engine()
    kept = opened.kept
    if kept is not None:
        obj = ask_model(kept)
        if obj is not None:
            return Answer(obj)
    held = held_time_index(opened)
    if held is not None:
        held.columns()  # once per index version, as as_of_view does
        answer = Answer(ask_view(held.at(cut)))
        if kept is not None and not kept.moments_whole():
            kept.keep_moments(held, [s["print"] for s in kept.shard_states])
        return answer
    # The as-of view (NetworkX under it) loads only when this read runs.
    from kgai_tui.core.model.moments_write import engine_prints
    from kgai_tui.core.reads.as_of import as_of_view

    full = whole_of(opened, whole)
    answer = Answer(ask_view(as_of_view(full, cut)))
    if kept is not None and not kept.moments_whole():
        kept.keep_moments(full.time_index, engine_prints(full))
    return answer


def diff_answer(
    engine: StoreSource, start: str, end: str, whole: WholeSource | None = None
) -> Answer:
    """``diff FROM TO``: what changed between two moments, and the decision behind it.

    The store's time index answers: through the model when it holds the index of
    the log the model holds, else from ``whole`` (which saves it for the next read).

    Raises:
        UsageError: either timestamp is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.reads.diff import diff_obj
    from kgai_tui.core.reads.store import time_index_for

    cut_from, cut_to = parse_as_of(start), parse_as_of(end)
    return Answer(diff_obj(time_index_for(engine(), whole), cut_from, cut_to))
