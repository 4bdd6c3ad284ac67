"""Which engine a write session checks and stages against: the read model, or a replay."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.model.schema import model_enabled

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.model.writer import ModelWriteEngine
    from kgai_tui.core.reads.store import Store

    #: What a write session checks and stages against: the model, or the replay.
    SessionEngine = Engine | ModelWriteEngine

__all__ = ["refresh_model", "release_engine", "session_engine"]


def session_engine(root: Path) -> SessionEngine:
    """The store as it is now, for a session holding the store lock.

    Through the read model (rows fetched as the checks need them) unless it is
    switched off or cannot be written; then the log is replayed into memory.
    """
    if model_enabled():
        from kgai_tui.core.model.writer import ModelWriteEngine

        try:
            return ModelWriteEngine(root)
        except OSError:
            pass
    from kgai_tui.core.engine.open import open_engine

    return open_engine(root)


def release_engine(engine: SessionEngine | Store) -> None:
    """Close what the session opened (the model's connection)."""
    engine.close()


def refresh_model(root: Path, engine: SessionEngine | None = None) -> None:
    """After an append: extend the read model with the new lines.

    ``engine``, the session's (still open), writes its staged rows when it is the
    model's; otherwise the model is extended from the log.
    """
    if not model_enabled():
        return
    from kgai_tui.core.model.writer import ModelWriteEngine, catch_up

    if isinstance(engine, ModelWriteEngine):
        engine.catch_up()
        return

    catch_up(root)
