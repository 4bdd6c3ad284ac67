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
from kgai_tui.core.reads.store import StoreSource

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import KeptReads
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = ["as_of_answer", "at_cut", "diff_answer"]


def as_of_answer(engine: StoreSource, timestamp: str) -> Answer:
    """``as-of TIMESTAMP``: names, links, heads and conflicts as they stood then.

    ``engine`` may open the read model, which answers from its moments when they
    cover the cut (:mod:`kgai_tui.core.model.moments`); otherwise the store's
    time index answers, and the model keeps the moments for the next read.

    Raises:
        UsageError: the timestamp is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.gosem.gotext import format_rfc3339

    cut = parse_as_of(timestamp)
    at = format_rfc3339(cut)

    def from_view(view: ProjectionView) -> dict[str, Any]:
        from kgai_tui.core.reads.as_of import as_of_obj  # only when the model cannot

        return as_of_obj(view, cut)

    return at_cut(
        engine, lambda model: model.as_of_obj(int(cut.timestamp()), at), from_view, cut
    )


def at_cut(
    engine: StoreSource,
    ask_model: Callable[[KeptReads], dict[str, Any] | None],
    ask_view: Callable[[ProjectionView], dict[str, Any]],
    cut: datetime,
) -> Answer:
    """A read at ``cut``: from what the read model keeps when ``engine`` opens one
    and it answers (``ask_model`` gives ``None`` when it cannot); else from the
    as-of view of the store's time index
    (:func:`~kgai_tui.core.reads.store.time_index_of`), after which the model
    keeps the moments for the next read."""
    from kgai_tui.core.reads.store import time_index_of

    opened = engine()
    kept = opened.kept
    if kept is not None:
        obj = ask_model(kept)
        if obj is not None:
            return Answer(obj)
    index = time_index_of(opened)
    index.columns()  # once per index version, as as_of_view does
    answer = Answer(ask_view(index.at(cut)))
    if kept is not None and not kept.moments_whole():
        kept.keep_moments(index, [s["print"] for s in kept.shard_states])
    return answer


def diff_answer(engine: StoreSource, start: str, end: str) -> Answer:
    """``diff FROM TO``: what changed between two moments, and the decision behind it,
    from the store's time index.

    Raises:
        UsageError: either timestamp is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.reads.diff import diff_obj
    from kgai_tui.core.reads.store import time_index_of

    cut_from, cut_to = parse_as_of(start), parse_as_of(end)
    return Answer(diff_obj(time_index_of(engine()), cut_from, cut_to))
