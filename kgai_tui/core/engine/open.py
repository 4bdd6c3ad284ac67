"""Open a store: discover its shards, compare fingerprints, then warm, append or cold.

The pipeline::

    list_log(root/log) -> prints_from_disk -> engine cache header + fingerprint
        same    -> load the cached projection             (how = "warm")
        append  -> scan and apply the appended bytes only (how = "append")
        else    -> cold_open: verify in workers, replay   (how = "cold")
    -> Engine (a value: nothing outside it changes it)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.errors import StoreNotFoundError
from kgai_tui.core.store.shards import list_log

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine

__all__ = ["open_engine"]


def open_engine(
    root: Path,
    *,
    cache: bool = True,
    cache_base: Path | None = None,
    background_save: bool = False,
) -> Engine:
    """Open the store at ``root`` read-only; ``cache=False`` ignores the warm cache.

    ``cache_base`` replaces the user cache directory (benchmarks, tests).

    Raises:
        StoreNotFoundError: ``root/log`` is not a directory.
    """
    log_dir = root / "log"
    if not log_dir.is_dir():
        raise StoreNotFoundError(f"no kgai store at {root} (no log/ directory)")
    # Imported here: a command that never opens a store does not pay for the
    # worker pool and the cache (multiprocessing, platformdirs).
    if cache:
        from kgai_tui.core.engine.cache import open_cached

        return open_cached(root, cache_base, background=background_save)
    from kgai_tui.core.engine.cold_open import open_cold

    listing = list_log(log_dir)
    return open_cold(root, listing.names, refused=listing.refused)
