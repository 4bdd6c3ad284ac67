"""The answers of the team reads: ``people`` (the MCP ``people`` tool) and ``stale``.

Arguments are checked before the store is opened: a bad moment or age is a usage
error even without a store.
"""

from __future__ import annotations

from typing import Any

from kgai_tui.core.answers.answer import Answer
from kgai_tui.core.reads.store import KeptReads, StoreSource

__all__ = ["people_answer", "stale_answer"]


def people_answer(engine: StoreSource, as_of: str = "") -> Answer:
    """``people [--as-of T]``: one row per author, as of ``T`` or now.

    As of ``T``, ``engine`` may open the read model, which answers from its
    moments and decision rows when they settle the cut
    (:mod:`kgai_tui.core.model.people_at`); otherwise the store's time index
    answers, and the model keeps the moments for the next read, as ``as-of`` does.

    Raises:
        UsageError: ``as_of`` is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.reads.kg import parse_as_of
    from kgai_tui.core.reads.people import people_now, people_obj, people_of_totals

    if not as_of:
        return Answer(people_now(engine().projection))
    from kgai_tui.core.answers.moments import at_cut
    from kgai_tui.core.gosem.gotext import format_rfc3339

    cut = parse_as_of(as_of)

    def from_model(model: KeptReads) -> dict[str, Any] | None:
        parts = model.people_at_parts(int(cut.timestamp()))
        if parts is None:
            return None
        obj = people_of_totals(*parts)
        obj["as_of"] = format_rfc3339(cut)
        return obj

    return at_cut(engine, from_model, lambda view: people_obj(view, cut), cut)


def stale_answer(engine: StoreSource, older_than: str = "180d") -> Answer:
    """``stale [--older-than AGE]``: elements whose newest decision in force is old.

    Raises:
        UsageError: ``older_than`` is not like ``180d``, ``4w`` or ``12h``.
    """
    from kgai_tui.core import clock
    from kgai_tui.core.reads.people import parse_age, stale_obj

    seconds = parse_age(older_than)
    return Answer(stale_obj(engine().projection, seconds, clock.now()))
