"""The engine: open a store's log, gate and order its events, and replay them.

An :class:`Engine` is a read-only snapshot of one store at the moment it was opened.
Opening reads the shard files (no lock, no writes), applies both integrity gates,
sorts by ``(lamport, hash)`` and replays into a :class:`Projection`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kgai_tui.core.errors import StoreNotFoundError
from kgai_tui.core.model import Event
from kgai_tui.core.projection import Projection
from kgai_tui.core.shards import LineProblem, ShardEvent, ShardRead, read_log


@dataclass(frozen=True, slots=True)
class LogSummary:
    """Counts of what was read, for status and warnings."""

    shards: int
    events: int
    skipped: int


def canonical_events(
    shards: Iterable[ShardRead], *, check_decision_id: bool = True
) -> list[Event]:
    """Return the events that pass the gates, in canonical ``(lamport, hash)`` order."""
    kept: list[Event] = []
    for shard in shards:
        for item in shard.events:
            d = item.decoded
            if d.hash_ok and (d.decision_id_ok or not check_decision_id):
                kept.append(d.event)
    kept.sort(key=lambda ev: (ev.lamport, ev.hash))
    return kept


def replay(events: Iterable[Event]) -> Projection:
    """Replay gated, ordered events into a fresh projection."""
    projection = Projection()
    projection.apply_all(events)
    return projection


class Engine:
    """A replayed store: the log as read plus the projection built from it."""

    def __init__(self, root: Path | None, shards: Sequence[ShardRead]) -> None:
        """Build the projection from shards that were already read."""
        self.root = root
        self.shards = list(shards)
        self.events = canonical_events(self.shards)
        self.projection = replay(self.events)
        self._by_hash: dict[str, Event] | None = None

    @classmethod
    def open(cls, root: Path) -> Engine:
        """Open the store at ``root`` read-only.

        Raises:
            StoreNotFoundError: ``root/log`` is not a directory.
        """
        log_dir = root / "log"
        if not log_dir.is_dir():
            raise StoreNotFoundError(f"no kgai store at {root} (no log/ directory)")
        return cls(root, read_log(log_dir))

    @classmethod
    def from_shards(cls, shards: Sequence[ShardRead]) -> Engine:
        """Build an engine over shards held in memory (tests, generated stores)."""
        return cls(None, shards)

    def event_for(self, event_hash: str) -> Event | None:
        """Return the applied event with this hash (for a decision's full record)."""
        if self._by_hash is None:
            self._by_hash = {ev.hash: ev for ev in self.events}
        return self._by_hash.get(event_hash)

    @property
    def problems(self) -> list[LineProblem]:
        """Every line problem found while reading, in shard then line order."""
        return [p for shard in self.shards for p in shard.problems]

    def all_shard_events(self) -> list[ShardEvent]:
        """Every parsed event with its location, in shard then file order."""
        return [item for shard in self.shards for item in shard.events]

    def summary(self) -> LogSummary:
        """Count shards, parsed events and skipped lines."""
        parsed = sum(len(s.events) for s in self.shards)
        return LogSummary(len(self.shards), parsed, len(self.problems))
