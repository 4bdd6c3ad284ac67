"""Live reload: notice when the store's log changed on disk (polled by the app)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgai_tui.core.store.shard_print import LogPrint

LIVE_POLL_SECONDS = 1.0
"""How often the app looks at the shards."""


def shard_fingerprint(root: Path) -> LogPrint:
    """The log's fingerprint (:mod:`shard_print`): changes on every append or edit."""
    from kgai_tui.core.store.shard_print import log_print

    return log_print(root / "log")


class LiveReload:
    """The log's last fingerprint, and whether it changed since."""

    def __init__(self, root: Path) -> None:
        """Take the fingerprint of the store at ``root`` now."""
        self.root = root
        self._print = shard_fingerprint(root)

    def loaded(self) -> None:
        """The store was just read: remember the log as it is now."""
        self._print = shard_fingerprint(self.root)

    def changed(self) -> bool:
        """Whether the log changed since last time (then remember the new one)."""
        current = shard_fingerprint(self.root)
        if current == self._print:
            return False
        self._print = current
        return True
