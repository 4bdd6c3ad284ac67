"""Which engine a write session checks and stages against: the read model, or a replay."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgai_tui.core.model.schema import model_enabled

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine

__all__ = ["refresh_model", "release_engine", "session_engine"]


def session_engine(root: Path) -> Engine:
    """The store as it is now, for a session holding the store lock.

    Through the read model (rows fetched as the checks need them) unless it is
    switched off or cannot be written; then the log is replayed into memory.
    """
    if model_enabled():
        from kgai_tui.core.model.writer import ModelWriteEngine

        try:
            return ModelWriteEngine(root)  # type: ignore[return-value]
        except OSError:
            pass
    from kgai_tui.core.engine.open import open_engine

    return open_engine(root)


def release_engine(engine: Any) -> None:
    """Close what the session opened (the model's connection)."""
    close = getattr(engine, "close", None)
    if close is not None:
        close()


def refresh_model(root: Path) -> None:
    """After an append: extend the read model with the new lines."""
    if model_enabled():
        from kgai_tui.core.model.writer import catch_up

        catch_up(root)
