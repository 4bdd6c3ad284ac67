"""How every read opens a store on disk: through its read model, which is built,
extended or rebuilt first as needed; the whole store only when the model is
switched off (``KGAI_TUI_READ_MODEL=off``) or cannot be written in the cache
directory (a read-only one). The command line, the MCP server and the explorer
all open a store here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.model.schema import model_enabled

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.model.open import ModelEngine

__all__ = ["read_store"]


def read_store(
    root: Path,
    *,
    replayed: Callable[[Engine], object] | None = None,
    any_thread: bool = False,
    background: bool = False,
    then: Callable[[Engine], object] | None = None,
    whole: Callable[[Path], Engine] | None = None,
) -> ModelEngine | Engine:
    """The store at ``root`` as a read opens it (see the module). Close it before
    a write: a read connection closed after the write's extension would change
    the files it sealed.

    ``replayed``, ``any_thread``, ``background`` and ``then``: as
    :func:`~kgai_tui.core.model.open.open_model` takes them (the replay a build
    is made from, before the model is written; a connection for any thread; a
    first build left to a detached child, and what that child does after it).

    ``whole``: how the whole store is read when the model is not (default: every
    line of the log, :func:`~kgai_tui.core.engine.open.open_engine`; a server
    keeps the one it read while the log is unchanged).

    Raises:
        StoreNotFoundError: ``root/log`` is not a directory.
    """
    if model_enabled():
        from kgai_tui.core.model.open import open_model

        try:
            return open_model(
                root,
                replayed=replayed,
                any_thread=any_thread,
                background=background,
                then=then,
            )
        except OSError:
            pass  # the model cannot be written here: the replay answers
    if whole is not None:
        return whole(root)
    from kgai_tui.core.engine.open import open_engine

    return open_engine(root)
