"""What a write session needs of a store, from the read model instead of a replay.

A write holds the store's lock, so the log cannot change under it: the model is
brought up to date once, the session stages its events on an
:class:`~kgai_tui.core.model.update.OverlayProjection` (rows fetched as the checks
need them, nothing written back), and after the append the model is extended with
the overlay's rows (:meth:`ModelWriteEngine.catch_up`): the lines just appended are
neither read back nor applied a second time, unless another process changed the
model meanwhile (then they are, from the log, like any other writer's lines).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgai_tui.core.model.open import open_model
from kgai_tui.core.model.update import OverlayProjection, Staged

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.wire.model import Event

__all__ = ["ModelWriteEngine", "catch_up"]


class ModelWriteEngine:
    """The parts of an :class:`Engine` a write session uses, answered by the model."""

    def __init__(self, root: Path, cache_base: Path | None = None) -> None:
        """Open (and bring up to date) the model of the store at ``root``."""
        self.root = root
        self.cache_base = cache_base
        self._model = open_model(root, cache_base)
        self._shards: list[dict[str, Any]] = self._model.shard_states
        self.projection = OverlayProjection(self._model.db)
        self._classic: Engine | None = None

    def max_tail_lamport(self) -> int:
        """The largest lamport among each shard's last parsed event (0 when empty)."""
        return max(
            (int(s["last_lamport"]) for s in self._shards if s["events"]), default=0
        )

    def tail_of(self, name: str) -> tuple[int, str] | None:
        """``(lamport, hash)`` of the last parsed event of a shard, or ``None``."""
        for s in self._shards:
            if s["print"][0] == name and s["events"]:
                return int(s["last_lamport"]), str(s["last_hash"])
        return None

    def _engine(self) -> Engine:
        # Only a decision first seen as a placeholder asks for every event: the
        # log is replayed for it (rare).
        if self._classic is None:
            from kgai_tui.core.engine.open import open_engine

            self._classic = open_engine(self.root)
        return self._classic

    def event_for(self, event_hash: str, install: str = "") -> Event | None:
        """The applied event with this hash, found by its line in the shards
        (``install``, its writer, names the shard searched first): resolving a
        conflict at 1M decisions replayed the whole log for it (14.7 s, 1.6 GB)."""
        return self._model.event_for(event_hash, install)

    @property
    def events(self) -> list[Event]:
        """Every applied event in canonical order."""
        return self._engine().events

    def catch_up(self) -> None:
        """After the session's append: write what its overlay staged into the model
        (a failure costs the next read, which extends the model from the log)."""
        staged = Staged(self.projection, self._shards, self._model.close)
        with contextlib.suppress(OSError):
            open_model(self.root, self.cache_base, staged=staged).close()

    def close(self) -> None:
        """Let go of the model."""
        self._model.close()


def catch_up(root: Path, cache_base: Path | None = None) -> None:
    """Extend the model with what was just appended (a failure costs the next read)."""
    with contextlib.suppress(OSError):
        open_model(root, cache_base).close()
