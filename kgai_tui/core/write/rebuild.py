"""``rebuild``: throw away a store's derived caches and build them again.

What goes: the time index, the read model (its SQLite file, log,
lock, seal and recall arrays), the search index and the settled shard prints,
all in the store's one directory of the user cache
(:func:`~kgai_tui.core.store.cache_file.store_cache_dir`), and whatever earlier
releases kept for the store elsewhere in the cache;
the store itself (the log, ``kg.config.json``, git data, kg's ``graph.kuzu``) is
not touched. The model is then built again from the whole log, under its lock,
so a reader meanwhile either sees the old one or waits for the new one, and the
slider's history (the time index) is saved from the same replay.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.model.schema import model_path
from kgai_tui.core.model.seal import model_lock
from kgai_tui.core.search.cache import cache_dir_for
from kgai_tui.core.store.cache_file import legacy_paths, seal_path, time_index_path
from kgai_tui.core.store.settled_prints import settled_path

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine

__all__ = ["derived_files", "rebuild_caches"]


def derived_files(root: Path, base: Path | None = None) -> list[Path]:
    """Every file and directory of the user cache derived from the store at ``root``."""
    model = model_path(root, base)
    siblings = (
        sorted(model.parent.glob(model.name + "*")) if model.parent.is_dir() else []
    )
    return [
        time_index_path(root, base),
        seal_path(time_index_path(root, base)),
        *[p for p in siblings if not p.name.endswith(".lock")],
        cache_dir_for(root, base),
        settled_path(root / "log", base),
        *legacy_paths(root, base),
    ]


def rebuild_caches(root: Path, base: Path | None = None) -> int:
    """Delete what :func:`derived_files` lists, build the read model again from the
    log, and return the number of events it applied.

    Raises:
        StoreNotFoundError: no store at ``root``.
        OSError: a cache file cannot be removed or the model cannot be written.
    """
    from kgai_tui.core.model.open import open_model

    path = model_path(root, base)
    path.parent.mkdir(parents=True, exist_ok=True)
    with model_lock(path):
        for derived in derived_files(root, base):
            if derived.is_dir():
                shutil.rmtree(derived, ignore_errors=True)
            else:
                derived.unlink(missing_ok=True)
    replays: list[Engine] = []
    model = open_model(root, base, replayed=replays.append)
    try:
        applied = int(model.projection.applied_count)
    finally:
        model.close()
    if replays:
        from kgai_tui.core.model.history import save_history

        save_history(replays.pop(), path)
    return applied
