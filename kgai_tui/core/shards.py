"""Read every shard of a store's log, never failing on a bad line (spec 2.10, 3.1).

A malformed line, a torn tail, an over-long line, invalid UTF-8 or wrong types are
skipped and reported as :class:`LineProblem` values with shard and line number; the
valid events around them still load. Reading opens files read-only and takes no lock.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from kgai_tui.core.codec import MAX_LINE_BYTES, DecodedLine, decode_line
from kgai_tui.core.errors import LineError

_GO_SPACE_BYTES: Final = b"\t\n\v\f\r "
_UNICODE_SPACES: Final = tuple(
    c.encode()
    for c in "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line the replay skipped (or an integrity finding), located for a person."""

    shard: str
    line: int
    reason: str
    hash: str = ""

    def describe(self) -> str:
        """Return ``shard:line: reason`` for messages."""
        return f"log/{self.shard}:{self.line}: {self.reason}"


@dataclass(slots=True)
class ShardEvent:
    """A parsed event with where it came from."""

    decoded: DecodedLine
    shard: str
    line: int


@dataclass(slots=True)
class ShardRead:
    """One shard file as read: its parsed events in file order and its problems."""

    name: str
    size: int
    newline_count: int
    events: list[ShardEvent] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)
    torn_tail: bytes = b""

    @property
    def install_id(self) -> str:
        """The writer's install id, from the file name."""
        return self.name[: -len(".ndjson")]


def trim_go_space(line: bytes) -> bytes:
    """Trim like Go's ``bytes.TrimSpace`` (ASCII and Unicode white space)."""
    line = line.strip(_GO_SPACE_BYTES)
    if not line.isascii():
        changed = True
        while changed and line:
            changed = False
            for sp in _UNICODE_SPACES:
                if line.startswith(sp):
                    line = line[len(sp) :].strip(_GO_SPACE_BYTES)
                    changed = True
                if line.endswith(sp):
                    line = line[: -len(sp)].strip(_GO_SPACE_BYTES)
                    changed = True
    return line


def shard_names(log_dir: Path) -> list[str]:
    """List ``*.ndjson`` shard files in name order (Go's ``os.ReadDir`` order)."""
    try:
        entries = list(os.scandir(log_dir))
    except FileNotFoundError:
        return []
    names = [
        e.name
        for e in entries
        if e.name.endswith(".ndjson") and not e.is_dir(follow_symlinks=True)
    ]
    return sorted(names, key=lambda n: n.encode("utf-8", "surrogateescape"))


def read_shard_bytes(name: str, data: bytes) -> ShardRead:
    """Parse one shard's bytes into events and problems."""
    shard = ShardRead(name=name, size=len(data), newline_count=data.count(b"\n"))
    lines = data.split(b"\n")
    last = lines.pop()  # bytes after the final newline: empty unless the tail is torn
    for number, raw in enumerate(lines, start=1):
        _read_line(shard, number, raw)
    if trim_go_space(last):
        _read_tail(shard, len(lines) + 1, last)
    return shard


def _read_tail(shard: ShardRead, number: int, last: bytes) -> None:
    """A last line without a newline: a whole event is read (as kg reads it), else torn.

    Either way it is a problem: the next append by another engine would be glued
    onto it. kgai-tui's own writer repairs it before appending.
    """
    try:
        if len(last) < MAX_LINE_BYTES:
            decode_line(trim_go_space(last))
        complete = len(last) < MAX_LINE_BYTES
    except LineError:
        complete = False
    if complete:
        before = len(shard.problems)
        _read_line(shard, number, last)
        if len(shard.problems) == before:
            shard.problems.append(
                LineProblem(shard.name, number, "last line has no trailing newline")
            )
        return
    shard.torn_tail = last
    shard.problems.append(
        LineProblem(shard.name, number, "torn last line (no trailing newline)")
    )


def _read_line(shard: ShardRead, number: int, raw: bytes) -> None:
    if len(raw) >= MAX_LINE_BYTES:
        shard.problems.append(
            LineProblem(
                shard.name, number, f"line longer than 16 MiB ({len(raw)} bytes)"
            )
        )
        return
    line = trim_go_space(raw)
    if not line:
        return
    try:
        decoded = decode_line(line)
    except LineError as exc:
        shard.problems.append(LineProblem(shard.name, number, str(exc)))
        return
    shard.events.append(ShardEvent(decoded, shard.name, number))
    ev = decoded.event
    if not decoded.hash_ok:
        reason = f"bad content hash: {ev.hash}"
        if not decoded.canonical and not _valid_utf8(line):
            reason += " (invalid UTF-8)"
        shard.problems.append(LineProblem(shard.name, number, reason, ev.hash))
    elif not decoded.decision_id_ok and ev.decision is not None:
        shard.problems.append(
            LineProblem(
                shard.name,
                number,
                f"decision id {ev.decision.id} does not match its content",
                ev.hash,
            )
        )


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_shard(path: Path) -> ShardRead:
    """Read one shard file from disk; an unreadable file is a problem, not a failure."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        shard = ShardRead(name=path.name, size=0, newline_count=0)
        reason = f"cannot read the shard: {exc.strerror or exc}"
        shard.problems.append(LineProblem(path.name, 0, reason))
        return shard
    return read_shard_bytes(path.name, data)


def read_log(log_dir: Path) -> list[ShardRead]:
    """Read every shard of a log directory, in name order."""
    return [read_shard(log_dir / name) for name in shard_names(log_dir)]
