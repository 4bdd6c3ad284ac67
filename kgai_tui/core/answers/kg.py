"""The answers of the reads on the store as it is now: status, doctor, heads,
conflicts, history, resolve and export (``kgai-tui <read> --json``, the MCP tools).

Each answer imports its read when it runs: the CLI imports this module for every
command (``--version`` and ``--help`` included), and they should not pay for the
encoder, the hashes or the projection.
"""

from __future__ import annotations

from kgai_tui.core.answers.answer import Answer
from kgai_tui.core.reads.store import StoreSource, WholeSource, whole_of

__all__ = [
    "conflicts_answer",
    "doctor_answer",
    "export_answer",
    "heads_answer",
    "history_answer",
    "resolve_answer",
    "status_answer",
]


def status_answer(engine: StoreSource) -> Answer:
    """``status``: where the store is, this install, and what it holds."""
    from kgai_tui.core.reads.health import status_obj

    return Answer(status_obj(engine()))


def doctor_answer(engine: StoreSource, replay: WholeSource) -> Answer:
    """``doctor``: every problem line; ``ok`` is false when there is one.

    Doctor never trusts a cache: every byte of the log is verified again, shard by
    shard (:func:`~kgai_tui.core.model.log_check.check_log`), and the model's counts
    are reported only when it holds exactly the lines read. Otherwise (no model, one
    extended over a rewritten line, a log changed meanwhile) the log is replayed.

    Args:
        engine: the store as the reads open it (through its model).
        replay: a replay of every byte of the log, without the caches.
    """
    from kgai_tui.core.model.log_check import check_log, holds_log
    from kgai_tui.core.reads.health import doctor_obj

    opened = engine()
    if opened.root is not None and opened.how != "cold":  # cold: a replay already
        kept = opened.kept
        if kept is None or not holds_log(
            kept.shard_states, kept.refused, check_log(opened.root / "log")
        ):
            opened = replay()
    return Answer(doctor_obj(opened))


def heads_answer(engine: StoreSource, element: str | None = None) -> Answer:
    """``heads [ELEMENT]``: the decisions in force, on one element or on all.

    Raises:
        NotFoundError: no such element.
    """
    from kgai_tui.core.reads.kg import heads_obj

    return Answer(heads_obj(engine().projection, element))


def conflicts_answer(engine: StoreSource, about: str = "") -> Answer:
    """``conflicts [--about X]``: elements with two or more decisions in force."""
    from kgai_tui.core.reads.kg import conflicts_obj

    return Answer(conflicts_obj(engine().projection, about))


def history_answer(engine: StoreSource, element: str) -> Answer:
    """``history ELEMENT``: every decision that shaped it, oldest first.

    Raises:
        NotFoundError: no decision touches the element.
    """
    from kgai_tui.core.reads.kg import history_obj
    from kgai_tui.core.reads.legend import status_on

    p = engine().projection
    obj = history_obj(p, element)
    eid = obj["element_id"]
    statuses = tuple(
        status_on(p, eid, p.dec_index[d["id"]]).value for d in obj["decisions"]
    )
    return Answer(obj, extra={"statuses": statuses})


def resolve_answer(engine: StoreSource, ref: str) -> Answer:
    """``resolve KIND:NAME``: the element id, whether it exists, and its heads."""
    from kgai_tui.core.reads.kg import resolve_obj

    return Answer(resolve_obj(engine().projection, ref))


def export_answer(
    engine: StoreSource,
    *,
    canonical: bool = False,
    whole: WholeSource | None = None,
) -> Answer:
    """``export [--canonical]``: the whole projection (and its replay digest),
    printed as it is read (:func:`kgai_tui.core.reads.export.export_chunks`).

    ``engine`` may open the read model, whose tables then give the rows in print
    order without a replay; should they not decode, ``whole`` opens the whole store
    instead (decided before the first byte).
    """
    from functools import partial

    from kgai_tui.core.reads.export import ProjectionExport, export_chunks

    opened = engine()
    kept = opened.kept
    source = None if kept is None else kept.export_source()
    if source is None:
        source = ProjectionExport(whole_of(opened, whole).projection)
    return Answer({}, stream=partial(export_chunks, source, canonical=canonical))
