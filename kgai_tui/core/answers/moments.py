"""The answers of the reads at a moment: ``as-of`` (the MCP ``as_of`` tool) and ``diff``.

Timestamps are RFC3339 or ``YYYY-MM-DD`` (the end of that day, UTC); they are
checked before the store is opened, so a bad one is a usage error even without a
store.
"""

from __future__ import annotations

from kgai_tui.core.answers.answer import Answer, EngineSource
from kgai_tui.core.reads.kg import parse_as_of

__all__ = ["as_of_answer", "diff_answer"]


def as_of_answer(
    engine: EngineSource, timestamp: str, whole: EngineSource | None = None
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
    opened = engine()
    from_model = getattr(opened, "as_of_obj", None)
    if from_model is not None:
        obj = from_model(int(cut.timestamp()), format_rfc3339(cut))
        if obj is not None:
            return Answer(obj)
        if whole is None:
            raise TypeError("a read model answers as-of only with a whole-store source")
    # The as-of view (NetworkX under it) loads only when this read runs.
    from kgai_tui.core.reads.as_of import as_of_obj, as_of_view

    full = opened if from_model is None else whole()  # type: ignore[misc]
    view = as_of_view(full, cut)
    answer = Answer(as_of_obj(view, cut))
    if from_model is not None:
        opened.keep_moments(full)  # type: ignore[attr-defined]
    return answer


def diff_answer(engine: EngineSource, start: str, end: str) -> Answer:
    """``diff FROM TO``: what changed between two moments, and the decision behind it.

    Raises:
        UsageError: either timestamp is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.reads.diff import diff_obj

    cut_from, cut_to = parse_as_of(start), parse_as_of(end)
    return Answer(diff_obj(engine(), cut_from, cut_to))
