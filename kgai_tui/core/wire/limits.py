"""Limits on a shard line, known to the store layer without loading the codec."""

from __future__ import annotations

from typing import Final

#: The longest line a shard may hold (spec: lines past it are problems, never events).
MAX_LINE_BYTES: Final = 16 * 1024 * 1024
