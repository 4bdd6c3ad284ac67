"""Take a foreign shard's new lines from a remote's copy, append-only (spec 2.10, 7.2).

A remote's copy of a teammate's shard can only ever add to ours: every line we hold
stays byte for byte, and a line of the remote copy is appended only when it is new
to us and extends the shard the way its writer would have, the same rules the S3
transport applies when it pulls (spec 7.2 step 5, 7.3):

* a complete line (it ends in ``\\n``) under 16 MiB that decodes as an event;
* its content hash and its decision id verify;
* its ``install_id`` is the shard's;
* it chains to the shard's tail (``parents[0]``, or none for a shard's first
  event), as ``AppendForeign`` demands;
* **(ours)** its lamport is at most 2^53, so our next lamport (one above every
  tail) stays far from int64's end. Lamport order inside a shard is not checked:
  the reference does not, and its own test shards are not in lamport order.

So a cut, deleted or rewritten shard on the remote changes nothing here, and a forged
line that forks the writer's chain is refused even when its hashes are right. Every
refused line is counted by reason. Appends go through :func:`append_lines` (one
batch per shard, ``fsync``, all or nothing) after :func:`repair_torn_tail`.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from kgai_tui.core.errors import LineError, write_error
from kgai_tui.core.store.regular_file import read_regular
from kgai_tui.core.wire.codec import MAX_LINE_BYTES, DecodedLine, decode_line
from kgai_tui.core.write.appender import append_lines, repair_torn_tail

__all__ = ["MAX_LAMPORT", "ShardTake", "held_bytes", "new_lines", "take_foreign"]

#: Above this a lamport is refused: our next event would be near int64's end.
MAX_LAMPORT: Final = 2**53


@dataclass(slots=True)
class ShardTake:
    """What one foreign shard gained: lines appended, lines refused by reason."""

    appended: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    note: str = ""

    def reason(self) -> str:
        """The refused lines as one reason (``""`` when none were refused)."""
        total = sum(self.refused.values())
        if not total:
            return ""
        parts = ", ".join(f"{why} ×{n}" for why, n in sorted(self.refused.items()))
        return f"{total} line(s) refused: {parts}"


@dataclass(slots=True)
class _Tail:
    """The last event of the shard as we hold it (hash ``""`` when it has none)."""

    hash: str = ""


def _decoded(raw: bytes) -> DecodedLine | None:
    try:
        return decode_line(raw)
    except (LineError, RecursionError, ValueError):
        return None


def _tail_of(lines: list[bytes]) -> _Tail:
    """The last line that decodes, as the writer's own append sees it (spec 5.4)."""
    for raw in reversed(lines):
        decoded = _decoded(raw.strip()) if raw.strip() else None
        if decoded is not None:
            return _Tail(decoded.event.hash)
    return _Tail()


def _gate(raw: bytes, install_id: str, tail: _Tail) -> tuple[str, DecodedLine | None]:
    """``("", event)`` when ``raw`` may be appended after ``tail``, else the reason."""
    if len(raw) + 1 > MAX_LINE_BYTES:
        return "longer than 16 MiB", None
    if raw[:1] != b"{" or raw[-1:] != b"}":
        return "not an event line", None
    decoded = _decoded(raw)
    if decoded is None:
        return "malformed event", None
    ev = decoded.event
    if not decoded.hash_ok:
        return "bad content hash", None
    if ev.decision is not None and not decoded.decision_id_ok:
        return "decision id does not match its content", None
    if ev.install_id != install_id:
        return "written by another install than the shard's", None
    parent = ev.parents[0] if ev.parents else ""
    if parent != tail.hash:
        return "does not extend the shard's hash chain", None
    if ev.lamport > MAX_LAMPORT:
        return "lamport above 2^53", None
    return "", decoded


def new_lines(
    local: bytes, remote: bytes, install_id: str
) -> tuple[list[bytes], ShardTake]:
    """The remote's lines to append after ``local``, in remote order (pure).

    Returns:
        The lines (without ``\\n``) and a :class:`ShardTake` counting them and
        the refused ones.
    """
    held_lines = local.split(b"\n")
    held_lines.pop()  # after the last newline: empty (a torn tail is repaired first)
    held = set(held_lines)
    tail = _tail_of(held_lines)
    take = ShardTake()
    out: list[bytes] = []
    remote_lines = remote.split(b"\n")
    if remote_lines.pop():
        take.refused["incomplete last line"] += 1
    for raw in remote_lines:
        if raw in held or not raw.strip():
            continue
        why, decoded = _gate(raw, install_id, tail)
        if decoded is None:
            take.refused[why] += 1
            continue
        out.append(raw)
        held.add(raw)
        tail = _Tail(decoded.event.hash)
    take.appended = len(out)
    return out, take


def held_bytes(path: Path) -> bytes:
    """Our copy of a shard (``b""`` when we have none), never following a link.

    Raises:
        OSError: it is not a regular file, or cannot be read.
    """
    try:
        return read_regular(path)
    except FileNotFoundError:
        return b""


def _is_regular_or_absent(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True


def take_foreign(path: Path, remote: bytes, install_id: str) -> ShardTake:
    """Append the remote copy's new, verified, chained lines to our copy at ``path``.

    Our copy is left alone when it is not a regular file (a symlink or a FIFO):
    the take then appends nothing and says why.

    Raises:
        WriteError: the shard could not be read, repaired or appended to; it is
            as it was.
    """
    try:
        if not _is_regular_or_absent(path):
            take = ShardTake()
            take.refused["our copy is not a regular file; nothing appended"] += 1
            return take
        note = repair_torn_tail(path) or ""
        local = held_bytes(path)
    except OSError as exc:
        raise write_error(exc, str(path)) from exc
    lines, take = new_lines(local, remote, install_id)
    append_lines(path, lines)
    take.note = note
    return take
