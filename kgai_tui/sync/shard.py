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

The S3 pull verifies each segment's lines once (:class:`PulledLine`), then
:func:`append_pulled` applies the same gates after the decode and appends a whole
segment, or nothing of it, in one ``write()`` and one ``fsync``.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from kgai_tui.core.errors import LineError, write_error
from kgai_tui.core.store.regular_file import open_regular, read_regular
from kgai_tui.core.store.shard_print import ShardPrint, print_of
from kgai_tui.core.store.shards import safe_name
from kgai_tui.core.wire.codec import DecodedLine, decode_line
from kgai_tui.core.wire.limits import MAX_LINE_BYTES
from kgai_tui.core.write.appender import append_lines, repair_torn_tail

__all__ = [
    "MAX_LAMPORT",
    "HeldShard",
    "PulledLine",
    "ShardTake",
    "append_pulled",
    "held_bytes",
    "hold_shard",
    "new_lines",
    "shard_print",
    "take_foreign",
]

#: Above this a lamport is refused: our next event would be near int64's end.
MAX_LAMPORT: Final = 2**53
_CHAIN: Final = "does not extend the shard's hash chain"


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


@dataclass(frozen=True, slots=True)
class PulledLine:
    """A line whose content hash has verified, with what the other gates read.

    ``raw`` is the line's canonical bytes (no newline); ``parent`` its first parent
    (``""`` for none); ``decision_id_ok`` is true for an event without a decision.
    """

    raw: bytes
    hash: str
    install_id: str
    parent: str
    lamport: int
    decision_id_ok: bool

    @classmethod
    def of(cls, decoded: DecodedLine, raw: bytes) -> PulledLine:
        """The gates' view of a decoded line whose canonical bytes are ``raw``."""
        ev = decoded.event
        parent = ev.parents[0] if ev.parents else ""
        return cls(
            raw, ev.hash, ev.install_id, parent, ev.lamport, decoded.decision_id_ok
        )


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
    if not decoded.hash_ok:
        return "bad content hash", None
    why = _extends(PulledLine.of(decoded, raw), install_id, tail.hash)
    return why, None if why else decoded


def _extends(line: PulledLine, install_id: str, tail: str) -> str:
    """``""`` when a verified line may follow the event ``tail``, else the reason."""
    if len(line.raw) + 1 > MAX_LINE_BYTES:
        return "longer than 16 MiB"
    if not line.decision_id_ok:
        return "decision id does not match its content"
    if line.install_id != install_id:
        return "written by another install than the shard's"
    if line.parent != tail:
        return _CHAIN
    if line.lamport > MAX_LAMPORT:
        return "lamport above 2^53"
    return ""


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


@dataclass(slots=True)
class HeldShard:
    """Our copy of a teammate's shard, ready for pulled segments.

    ``lines`` counts its newlines (the reference's ``ShardCounts``), ``tail`` is the
    hash of its last event that decodes (``""`` for none; ``None`` until it is
    needed, when the count came from a fingerprint), ``note`` tells of a repaired
    torn tail; ``regular`` is false when something else than a file (a symlink, a
    FIFO) holds its name: nothing is appended to it then.
    """

    path: Path
    install_id: str
    lines: int = 0
    tail: str | None = ""
    note: str = ""
    regular: bool = True


def _last_event_hash(data: bytes) -> str:
    """The hash of the last line of ``data`` that decodes, reading back from its end."""
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end) + 1
        raw = data[start:end].strip()
        decoded = _decoded(raw) if raw else None
        if decoded is not None:
            return decoded.event.hash
        end = start - 1
    return ""


def hold_shard(
    path: Path, install_id: str, known: ShardPrint | None = None
) -> HeldShard:
    """Repair a torn tail of our copy at ``path`` and read where it ends.

    ``known`` is the shard's fingerprint when its lines were last counted: while
    the file still matches it (:meth:`ShardPrint.same_file`), its count is taken
    from there and the shard is not read.

    Raises:
        WriteError: the shard could not be read or repaired; it is as it was.
    """
    try:
        if not _is_regular_or_absent(path):
            return HeldShard(path, install_id, regular=False)
        note = repair_torn_tail(path) or ""
        if known is not None and known.lines >= 0:
            now = shard_print(path)
            if now is not None and now.same_file(known):
                return HeldShard(path, install_id, known.lines, None, note)
        local = held_bytes(path)
    except OSError as exc:
        raise write_error(exc, str(path)) from exc
    return HeldShard(
        path, install_id, local.count(b"\n"), _last_event_hash(local), note
    )


def shard_print(path: Path, lines: int = -1) -> ShardPrint | None:
    """The fingerprint of the shard at ``path`` now (``None`` when there is none).

    Raises:
        OSError: it exists but cannot be read, or is not a regular file.
    """
    try:
        with open_regular(path) as f:
            return replace(print_of(path.name, f), lines=lines)
    except FileNotFoundError:
        return None


def append_pulled(held: HeldShard, lines: Sequence[PulledLine]) -> str:
    """Append a segment's verified lines to ``held`` if every one extends it.

    Each line must pass the gates of :func:`new_lines` after the decode (decision
    id, install, chain from ``held.tail`` and then line to line, lamport, size).
    Then all of them go in one ``write()`` of whole lines and one ``fsync``, and
    ``held`` moves past them; else nothing is appended.

    Returns:
        ``""`` when appended, else why the first line that failed was refused.

    Raises:
        WriteError: the shard could not be appended to; it is as it was.
        Interrupted: a signal arrived first; the shard is as it was.
    """
    if held.tail is None:
        try:
            held.tail = _last_event_hash(held_bytes(held.path))
        except OSError as exc:
            raise write_error(exc, str(held.path)) from exc
    tail = held.tail
    for line in lines:
        why = _extends(line, held.install_id, tail)
        if why:
            shown = safe_name(line.hash)[:80]
            if why == _CHAIN:
                return (
                    f"hash-chain break for install {held.install_id}: event "
                    f"{shown} {why}"
                )
            return f"event {shown}: {why}"
        tail = line.hash
    append_lines(held.path, [line.raw for line in lines], batched=True)
    held.tail, held.lines = tail, held.lines + len(lines)
    return ""
