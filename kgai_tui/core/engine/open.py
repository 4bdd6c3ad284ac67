"""Open a store whole: discover its shards, verify every line while replaying it.

The pipeline::

    list_log(root/log) -> cold_open: verify in workers, replay (how = "cold")
    -> Engine (a value: nothing outside it changes it)

Nothing of the projection is kept: the read model (:mod:`kgai_tui.core.model`) is
the one store derived from the log, and this replay builds it; reads answer from
it unless it is switched off (``KGAI_TUI_READ_MODEL=off``) or cannot be written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.errors import StoreNotFoundError
from kgai_tui.core.store.shards import list_log

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine

__all__ = ["open_engine", "replay_log"]


def replay_log(root: Path) -> Engine:
    """The store at ``root`` replayed from every line of its log, each verified:
    what builds the read model, its time index and the search index. Nothing of
    it is kept once they are built, and it writes nothing anywhere.

    Raises:
        StoreNotFoundError: ``root/log`` is not a directory.
    """
    log_dir = root / "log"
    if not log_dir.is_dir():
        raise StoreNotFoundError(f"no kgai store at {root} (no log/ directory)")
    # Imported here: a command that never opens a store does not pay for the
    # worker pool (multiprocessing).
    from kgai_tui.core.engine.cold_open import open_cold
    from kgai_tui.core.heap import GcPaused, settle_heap

    listing = list_log(log_dir)
    with GcPaused():
        engine = open_cold(root, listing.names, refused=listing.refused)
        settle_heap(engine.projection.applied_count)
        return engine


def open_engine(root: Path) -> Engine:
    """The whole store, for a read its model does not serve (the model switched
    off or not writable here, doctor's replay, a placeholder's events): the same
    replay as :func:`replay_log`, named apart so that a read path that opens the
    whole store can be told from a build.

    Raises:
        StoreNotFoundError: ``root/log`` is not a directory.
    """
    return replay_log(root)
