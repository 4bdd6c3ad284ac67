"""The answers of the team reads: ``people`` (the MCP ``people`` tool) and ``stale``.

Arguments are checked before the store is opened: a bad moment or age is a usage
error even without a store.
"""

from __future__ import annotations

from kgai_tui.core.answers.answer import Answer, EngineSource

__all__ = ["people_answer", "stale_answer"]


def people_answer(engine: EngineSource, as_of: str = "") -> Answer:
    """``people [--as-of T]``: one row per author, as of ``T`` or now.

    Raises:
        UsageError: ``as_of`` is neither RFC3339 nor ``YYYY-MM-DD``.
    """
    from kgai_tui.core.reads.kg import parse_as_of
    from kgai_tui.core.reads.people import people_now, people_obj

    if not as_of:
        return Answer(people_now(engine().projection))
    from kgai_tui.core.reads.as_of import as_of_view

    cut = parse_as_of(as_of)
    return Answer(people_obj(as_of_view(engine(), cut), cut))


def stale_answer(engine: EngineSource, older_than: str = "180d") -> Answer:
    """``stale [--older-than AGE]``: elements whose newest decision in force is old.

    Raises:
        UsageError: ``older_than`` is not like ``180d``, ``4w`` or ``12h``.
    """
    from kgai_tui.core import clock
    from kgai_tui.core.reads.people import parse_age, stale_obj

    seconds = parse_age(older_than)
    return Answer(stale_obj(engine().projection, seconds, clock.now()))
