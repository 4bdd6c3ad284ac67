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


def refresh_model(root: Path, engine: Any = None) -> None:
    """After an append: extend the read model with the new lines.

    ``engine``, the session's (still open), writes its staged rows when it is the
    model's; otherwise the model is extended from the log.
    """
    if not model_enabled():
        return
    staged_catch_up = getattr(engine, "catch_up", None)
    if staged_catch_up is not None:
        staged_catch_up()
        return
    from kgai_tui.core.model.writer import catch_up

    catch_up(root)
