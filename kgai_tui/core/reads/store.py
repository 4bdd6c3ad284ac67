"""The one read handle: what every face may ask of an opened store.

A store opens two ways: through its read model on disk
(:class:`~kgai_tui.core.model.open.ModelEngine`, rows fetched as a read needs them)
or as the whole replay (:class:`~kgai_tui.core.engine.engine.Engine`, the oracle).
Both are a :class:`Store`, so a read is written once against this protocol and
type-checked against both; nothing probes a handle for what it can do.

A handle is either the whole replay (:attr:`Store.replayed`) or reads through
the model (:attr:`Store.kept`: its moments, the export's ordered rows, the
people tables). A kept read answers ``None`` when the model does not hold what it
needs; the model's time index answers then (built from a replay of the log when
none was saved). The same split one level down is
:class:`StoredReads`: the passes over every decision that the model's tables
answer in a few queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from array import array

    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.model.moment_probe import MomentProbe
    from kgai_tui.core.model.people_at import PeopleParts
    from kgai_tui.core.model.people_rows import HeadCounts, PersonTotals
    from kgai_tui.core.reads.export import ExportSource
    from kgai_tui.core.reads.timeline import Filters
    from kgai_tui.core.recall.index import RecallIndex
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.store.shards import LineProblem, LogSummary
    from kgai_tui.core.timeindex.index import TimeIndex
    from kgai_tui.core.wire.model import Event

__all__ = [
    "KeptReads",
    "Store",
    "StoreSource",
    "StoredReads",
    "TimelineReads",
    "WholeSource",
    "time_index_of",
    "whole_of",
]


class TimelineReads(Protocol):
    """The explorer timeline's passes over every recorded decision, answered
    without a walk: by the model's tables now, and at a cut by a time index that
    shares them (:mod:`kgai_tui.core.timeindex.moment_timeline`).

    A projection in memory has none
    (:attr:`~kgai_tui.core.replay.projection_view.ProjectionView.timeline_reads`
    is ``None``): the timeline walks it, which is what these are tested against.
    """

    def timeline_columns(
        self,
    ) -> tuple[array[int], frozenset[int], list[str], list[str], list[str]]:
        """The timeline's order, heads, writers, authors and element kinds."""
        ...

    def timeline_keep(
        self, order: Sequence[int], heads: frozenset[int], filters: Filters
    ) -> Sequence[int]:
        """The decisions of ``order`` passing ``filters``, order kept."""
        ...

    def timeline_stamps(self, rows: Iterable[int]) -> array[int]:
        """The recorded times of ``rows`` (those with one), ascending."""
        ...


class StoredReads(Protocol):
    """Whole-store passes a projection read from the model answers from its tables
    (a few queries, no decision row kept) instead of a walk over every decision.

    A projection replayed in memory, now or at a cut, has none
    (:attr:`~kgai_tui.core.replay.projection_view.ProjectionView.stored` is
    ``None``): its readers walk it, which is what these are tested against.
    """

    def people_parts(self) -> tuple[list[PersonTotals], list[HeadCounts]]:
        """Per-author totals and head counts, now."""
        ...

    def recall_index(self) -> RecallIndex:
        """The stored recall index."""
        ...

    def report_timeline(
        self, last: int
    ) -> tuple[int, list[int], int | None, dict[int, int]]:
        """What the report reads of every decision (see ``Timeline``)."""
        ...

    def superseders(self) -> list[tuple[str, str, int]]:
        """``(author, superseding author, decisions)`` of the superseded
        decisions (the People view's flow lines)."""
        ...

    def shaped_by(self, author: str) -> list[str]:
        """The elements an author's recorded decisions shape, in no order."""
        ...

    def author_days(self) -> list[tuple[str, int, int]]:
        """``(author, UTC day, decisions)`` of the recorded decisions with a time
        (the People view's months)."""
        ...


class KeptReads(Protocol):
    """The reads at a moment, and the export, that the read model keeps on disk.

    Each answers ``None`` (``False``) when the model does not hold what it needs
    for that read; the time index answers it then, and :meth:`keep_moments`
    stores what it learnt for the next read.
    """

    @property
    def projection(self) -> ProjectionView:
        """The store now, read from the model's rows."""
        ...

    @property
    def model_path(self) -> Path:
        """The model file (what is stored beside it is named after it)."""
        ...

    @property
    def shard_states(self) -> list[dict[str, Any]]:
        """Per shard, what the model holds of it (its fingerprint first)."""
        ...

    @property
    def refused(self) -> list[LineProblem]:
        """The entries of ``log/`` that are not regular files, as this read listed
        them."""
        ...

    def export_source(self) -> ExportSource | None:
        """The export's parts in print order."""
        ...

    def as_of_obj(self, cut: int, at: str) -> dict[str, Any] | None:
        """The ``as-of`` object at ``cut`` (Unix seconds; ``at`` its RFC3339 text)."""
        ...

    def answers_now_at(self, cut: int) -> bool:
        """Whether the store as of ``cut`` is known to be the store now."""
        ...

    def people_at_parts(self, cut: int) -> PeopleParts | None:
        """``people`` as of ``cut``: totals and head counts."""
        ...

    def moment_keys(self, cut: int) -> tuple[list[str], list[str]] | None:
        """Element ids and in-force decision ids at ``cut``, each sorted."""
        ...

    def moment_probe(self, cut: int) -> MomentProbe | None:
        """Point questions about ``cut``."""
        ...

    def moments_whole(self) -> bool:
        """Whether the model's moments answer every cut (nothing to keep)."""
        ...

    def keep_moments(self, index: TimeIndex, prints: list[Any]) -> bool:
        """Store the moments of ``index``, made from the log whose shards have
        ``prints`` (the handle is closed after)."""
        ...

    def time_index(self) -> TimeIndex:
        """The slider's history for exactly the log this model holds, its decision
        columns read from the model: as saved, else built from a replay of the
        log and saved."""
        ...


class Store(Protocol):
    """An opened store: the projection now and the log's health, plus either the
    whole replay (:attr:`replayed`) or what the model keeps (:attr:`kept`)."""

    @property
    def root(self) -> Path | None:
        """The store's directory (``None`` for a store held in memory)."""
        ...

    @property
    def log_dir(self) -> Path | None:
        """The store's ``log/`` directory."""
        ...

    @property
    def projection(self) -> ProjectionView:
        """The store now."""
        ...

    @property
    def problems(self) -> list[LineProblem]:
        """Every problem found while reading, in shard name then line order."""
        ...

    @property
    def how(self) -> str:
        """How it was opened: ``cold`` (every byte read now), ``warm`` or ``append``
        (from a cache that trusts an append-only log)."""
        ...

    @property
    def replayed(self) -> Engine | None:
        """This store as the whole replay, when that is what the handle holds."""
        ...

    @property
    def kept(self) -> KeptReads | None:
        """What the read model keeps, when the handle reads through it."""
        ...

    def chain_break_lines(self) -> list[tuple[str, int, int]]:
        """``(shard, line, lamport)`` of each broken hash chain."""
        ...

    def event_for(self, event_hash: str, install: str = "") -> Event | None:
        """The applied event with this hash."""
        ...

    def where(self, event_hash: str) -> str:
        """``log/<shard>:<line>`` of the last parsed line with this hash, or ``?``."""
        ...

    def summary(self) -> LogSummary:
        """Shards, parsed events and skipped lines."""
        ...

    def close(self) -> None:
        """Let go of what the handle holds open (the model's connection)."""
        ...


#: How a read gets its store: called once, after the arguments were checked, so a
#: bad argument is reported without opening (or even finding) the store.
StoreSource = Callable[[], Store]
#: How a read gets the whole replay, for what only it answers.
WholeSource = Callable[[], "Engine"]


def whole_of(opened: Store, whole: WholeSource | None = None) -> Engine:
    """The whole replay of an opened store: itself when that is what it is, else
    ``whole``'s, else the store at its directory replayed from every line (a
    builder: nothing of it is kept in the cache).

    Raises:
        TypeError: a store held in memory read through a model (no directory).
    """
    replayed = opened.replayed
    if replayed is not None:
        return replayed
    if whole is not None:
        return whole()
    if opened.root is None:
        raise TypeError("a store read through its model has no directory to open")
    from kgai_tui.core.engine.open import open_engine

    return open_engine(opened.root)


def time_index_of(opened: Store) -> TimeIndex:
    """The store's history for the slider, ``diff`` and the reads at a cut: the
    whole replay's when that is what is open, else the one the model reads
    (saved beside it; built from a replay of the log when it was not)."""
    replayed, kept = opened.replayed, opened.kept
    if replayed is not None:
        return replayed.time_index
    if kept is None:
        raise TypeError("a store is read as its replay or through its model")
    return kept.time_index()
