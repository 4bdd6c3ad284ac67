"""The time index's shared shapes: the edge order key and a carrying entry."""

from __future__ import annotations

from typing import Final

SEQ: Final = 1 << 20  # edge order key: pos * SEQ + index in the supersedes list

# A carrying entry: (pos, time, title, rationale, author, refs, summary, lamport,
# install, hash, dec_time, shapes of that event)
Carry = tuple[int, int, str, str, str, str, str, int, str, str, int | None, list[str]]
