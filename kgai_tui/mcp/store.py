"""The store behind a long-running reader (the MCP server): re-opened when it changes.

A server lives for a whole agent session while people, ``kg`` and other agents keep
appending to the log. Every call therefore checks the shard fingerprint of :mod:`shard_print` (name,
size, inode, change and modification times, first and last 64 KiB) and opens the
store again only when it changed, so an answer always reflects the log as it is on
disk at the moment of the call.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from kgai_tui.core.answers.answer import no_store
from kgai_tui.core.store.discovery import StoreLocation, locate_store
from kgai_tui.core.store.shard_print import LogPrint, log_print

if TYPE_CHECKING:
    # The whole store (and NetworkX and NumPy under it) loads only when a tool
    # needs it: the reads go through the model, so a session may never load it.
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.reads.store import Store
    from kgai_tui.core.search.index import SearchIndex


def shard_fingerprint(root: Path) -> LogPrint:
    """The log's fingerprint (:func:`shard_print.log_print`): it changes with every
    append, rewrite, replacement or ``touch`` of a shard, so the server never answers
    from an engine older than the log."""
    return log_print(root / "log")


class LiveStore:
    """One store, opened on demand and replayed again whenever its shards change.

    Thread-safe: the MCP SDK runs synchronous tools on worker threads.
    """

    def __init__(self, explicit: str | None = None) -> None:
        """Locate the store once (``--store``, ``KGAI_STORE`` or the project's).

        Args:
            explicit: the ``--store`` value, or ``None`` for discovery.
        """
        self._explicit = explicit
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._fingerprint: LogPrint | None = None
        self._index: SearchIndex | None = None
        self._index_print: LogPrint | None = None

    @property
    def location(self) -> StoreLocation:
        """Where the store is, found at each call as the CLI finds it (kg's order:
        ``--store``, ``KGAI_STORE``, an approved ``.kgairc``, the global layer, the
        project's own): approving a ``.kgairc`` mid-session takes effect at once.

        Raises:
            ConfigError: a corrupt layer or a refused ``store`` value (reported by
                the tool called, never a server that fails to start).
        """
        return locate_store(self._explicit)

    @property
    def root(self) -> Path:
        """The store directory (it may not exist yet)."""
        return self.location.root

    def engine(self) -> Engine:
        """Return an engine over the log as it is now.

        Raises:
            StoreNotFoundError: there is no store at the location (the message is
                the CLI's, so the MCP error matches ``kgai-tui … --json``).
        """
        location = self.location
        if not location.exists:
            raise no_store(location)
        with self._lock:
            current = shard_fingerprint(location.root)
            if self._engine is None or current != self._fingerprint:
                from kgai_tui.core.engine.open import open_engine

                self._engine = open_engine(location.root)
                self._fingerprint = current
            return self._engine

    def model(self) -> Store:
        """The store through its read model on disk, as it is now (one snapshot).

        Opened per call: the model checks the log's fingerprint itself, extends or
        rebuilds when needed, and a call touches only the rows it reads, so the
        server holds no projection in memory. When the model cannot be written
        (or ``KGAI_TUI_READ_MODEL=off``), the whole store is opened instead.

        Raises:
            StoreNotFoundError: there is no store at the location.
        """
        from kgai_tui.core.model.read import read_store

        location = self.location
        if not location.exists:
            raise no_store(location)
        return read_store(location.root, whole=lambda _: self.engine())

    def _builder(self, root: Path) -> Engine:
        """What builds the search index when there is none for the log: a replay
        of every line, not kept (with the model switched off, the whole store
        this server holds)."""
        from kgai_tui.core.model.schema import model_enabled

        if not model_enabled():
            return self.engine()
        from kgai_tui.core.engine.open import replay_log

        return replay_log(root)

    def search_index(self) -> SearchIndex:
        """Return the search index of the store as it is now (built or updated once).

        The index lives in the user cache directory and is shared with
        ``kgai-tui search``: when it matches the log it is opened as it is (no
        replay); otherwise the whole store is opened and the index brought up to
        date. It is reopened only when the log changed.

        Raises:
            StoreNotFoundError: there is no store at the location.
            WriteError: another process held the index lock for too long.
        """
        from kgai_tui.core.search.index import SearchIndex

        location = self.location
        if not location.exists:
            raise no_store(location)
        current = shard_fingerprint(location.root)
        with self._lock:
            index = self._index
            # (one a search failed in was dropped from the cache: opened anew)
            if (
                index is not None
                and self._index_print == current
                and not index.forgotten
            ):
                return index
            index = SearchIndex.open_cached(location.root)
        if index is None:
            from kgai_tui.core.search.through_model import index_through_model

            index = index_through_model(location.root)
        if index is None:
            index = SearchIndex.for_engine(self._builder(location.root))
        with self._lock:
            self._index, self._index_print = index, current
            return index
