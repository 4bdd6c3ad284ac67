"""The slider's and ``diff``'s history beside the model: the time index of the log
the model holds, built by replaying that log when it was never saved.

The replay is the builder here, not a way to read: it is made, the index is built
from it and saved in the store's cache directory, and the readers load that file
sharing the model's decision rows. Before this, a model without a saved index sent
the slider, ``diff`` and the reads at a cut the moments cannot answer to open the
whole store (1M decisions: 38.6 s and 1.65 GB for the first ``diff`` after a first
read), which also wrote a second copy of the store, the engine cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.store.cache_file import time_index_in

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.timeindex.index import TimeIndex

__all__ = ["save_history", "time_index_beside"]


def save_history(engine: Engine, model_file: Path) -> TimeIndex:
    """Build the time index of the log ``engine`` replayed and save it beside the
    model at ``model_file`` (a failed write only costs the next read its time)."""
    from kgai_tui.core.timeindex.cache import build_and_save_time_index

    return build_and_save_time_index(engine, time_index_in(model_file.parent))


def time_index_beside(
    root: Path,
    model_file: Path,
    shards: list[list[object]],
    projection: ProjectionView,
) -> TimeIndex:
    """The time index of the log the model at ``model_file`` holds (per shard its
    fingerprint and event count: ``shards``), its decision columns read from the
    model's ``projection``: the saved one (extended with lines appended since),
    else built now from a replay of the log and saved, then loaded as saved.

    When the log moved on while the replay ran, the saved index no longer
    matches the model's prefix; the replay's own index answers then (it holds the
    log as it was replayed, a later prefix of the same log)."""
    from kgai_tui.core.engine.open import replay_log
    from kgai_tui.core.timeindex.cache import saved_time_index

    path, log_dir = time_index_in(model_file.parent), root / "log"
    index = saved_time_index(root, path, shards, projection, log_dir)
    if index is not None:
        return index
    engine = replay_log(root)  # the builder: every line read, nothing kept
    built = save_history(engine, model_file)
    index = saved_time_index(root, path, shards, projection, log_dir)
    return built if index is None else index
