"""Read every shard of a store's log, never failing on a bad line (spec 2.10, 3.1).

A malformed line, a torn tail, an over-long line, invalid UTF-8 or wrong types are
skipped and reported as :class:`LineProblem` values with shard and line number; the
valid events around them still load. Reading opens files read-only and takes no lock.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

from kgai_tui.core.errors import LineError
from kgai_tui.core.store.regular_file import NotRegularError, kind_of, open_regular
from kgai_tui.core.wire.limits import MAX_LINE_BYTES

if TYPE_CHECKING:
    from kgai_tui.core.wire.codec import DecodedLine

_GO_SPACE_BYTES: Final = b"\t\n\v\f\r "
_UNICODE_SPACES: Final = tuple(
    c.encode()
    for c in "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


@dataclass(frozen=True, slots=True)
class LogSummary:
    """Counts of what was read, for status and warnings."""

    shards: int
    events: int
    skipped: int


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


@dataclass(frozen=True, slots=True)
class LogListing:
    """The ``*.ndjson`` entries of ``log/``: the regular files, and the rest refused.

    Only regular files are shards. Anything else with a shard's name (a symbolic
    link, even to a regular file, a FIFO, a socket, a device, a directory) is never
    opened and is reported, once, as a problem naming it safely.
    """

    names: list[str]
    refused: list[LineProblem]


def list_log(log_dir: Path) -> LogListing:
    """List ``log/`` in name order (Go's ``os.ReadDir`` order), refusing non-files."""
    try:
        entries = list(os.scandir(log_dir))
    except FileNotFoundError:
        return LogListing([], [])
    names: list[str] = []
    refused: list[LineProblem] = []
    for e in sorted(entries, key=lambda e: e.name.encode("utf-8", "surrogateescape")):
        if not e.name.endswith(".ndjson"):
            continue
        try:
            regular = e.is_file(follow_symlinks=False)
        except OSError:
            regular = False
        if regular:
            names.append(e.name)
        else:
            reason = f"not a regular file ({_entry_kind(e)}): not read"
            refused.append(LineProblem(safe_name(e.name), 0, reason))
    return LogListing(names, refused)


def _entry_kind(entry: os.DirEntry[str]) -> str:
    """Say what a refused entry is; a link's target is only ``stat``ed, never opened."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return "gone"
    if not stat.S_ISLNK(mode):
        return kind_of(mode)
    try:
        target = os.stat(entry.path).st_mode
    except OSError:
        return "a symbolic link that loops or points nowhere"
    return f"a symbolic link to {kind_of(target)}"


def safe_name(name: str) -> str:
    """A file name fit for any output: controls, format characters and undecodable
    bytes become escapes (``\\x1b``, ``\\u202e``), so a name cannot drive a terminal."""
    out = []
    for ch in name:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def shard_names(log_dir: Path) -> list[str]:
    """The shard files of ``log/`` in name order: regular files only (:func:`list_log`)."""
    return list_log(log_dir).names


def log_extent(log_dir: Path) -> tuple[int, int]:
    """``(shards, bytes)`` of ``log/``: its ``*.ndjson`` regular files and their
    sizes, from one directory scan (what a progress line says, and what the cost
    of reading the log grows with); ``(0, 0)`` when it cannot be listed."""
    count, size = 0, 0
    try:
        with os.scandir(log_dir) as entries:
            for entry in entries:
                if entry.name.endswith(".ndjson") and entry.is_file(
                    follow_symlinks=False
                ):
                    count += 1
                    size += entry.stat(follow_symlinks=False).st_size
    except OSError:
        return 0, 0
    return count, size


class CheckedLike(Protocol):
    """What a line decoder reports: the two gates and the claimed ids."""

    @property
    def hash_ok(self) -> bool: ...
    @property
    def decision_id_ok(self) -> bool: ...
    @property
    def canonical(self) -> bool: ...
    @property
    def event_hash(self) -> str: ...
    @property
    def decision_id(self) -> str | None: ...


D = TypeVar("D", bound=CheckedLike)


def walk_shard(
    name: str,
    data: bytes,
    decode: Callable[[bytes], D],
    keep: Callable[[D, int, int, int], None],
) -> tuple[list[LineProblem], bytes]:
    """Decode every line of one shard's bytes; one walk for every reader.

    ``keep(decoded, line_number, offset, length)`` receives each parsed line in file
    order (offset and length of the trimmed line). Returns the problems, in line
    order, and the torn tail (``b""`` unless the last line is torn).
    """
    problems: list[LineProblem] = []
    lines = data.split(b"\n")
    last = lines.pop()  # bytes after the final newline: empty unless the tail is torn
    pos = 0
    for number, raw in enumerate(lines, start=1):
        walk_line(name, number, raw, pos, decode, keep, problems)
        pos += len(raw) + 1
    torn = b""
    if last:
        torn = walk_tail(name, len(lines) + 1, last, pos, decode, keep, problems)
    return problems, torn


def walk_line(
    name: str,
    number: int,
    raw: bytes,
    start: int,
    decode: Callable[[bytes], D],
    keep: Callable[[D, int, int, int], None],
    problems: list[LineProblem],
) -> None:
    length = len(raw)
    if length >= MAX_LINE_BYTES:
        problems.append(
            LineProblem(name, number, f"line longer than 16 MiB ({length} bytes)")
        )
        return
    line = raw if raw[:1] == b"{" and raw[-1:] == b"}" else trim_go_space(raw)
    if not line:
        return
    try:
        decoded = decode(line)
    except LineError as exc:
        problems.append(LineProblem(name, number, str(exc)))
        return
    keep(decoded, number, start + raw.find(line), len(line))
    if not decoded.hash_ok:
        reason = f"bad content hash: {decoded.event_hash}"
        if not decoded.canonical and not _valid_utf8(line):
            reason += " (invalid UTF-8)"
        problems.append(LineProblem(name, number, reason, decoded.event_hash))
    elif not decoded.decision_id_ok and decoded.decision_id is not None:
        problems.append(
            LineProblem(
                name,
                number,
                f"decision id {decoded.decision_id} does not match its content",
                decoded.event_hash,
            )
        )


def tail_is_event(last: bytes, decode: Callable[[bytes], object]) -> bool:
    """Whether a last line without a newline is read as an event (kg reads it whole
    when it decodes); else it is torn, and a reader counts it as no event."""
    if not trim_go_space(last) or len(last) >= MAX_LINE_BYTES:
        return False
    try:
        decode(trim_go_space(last))
    except LineError:
        return False
    return True


def walk_tail(
    name: str,
    number: int,
    last: bytes,
    start: int,
    decode: Callable[[bytes], D],
    keep: Callable[[D, int, int, int], None],
    problems: list[LineProblem],
) -> bytes:
    """A last line without a newline: a whole event is read (as kg reads it), else torn.

    Either way it is a problem: the next append by another engine would be glued
    onto it. kgai-tui's own writer repairs it before appending.
    """
    if not trim_go_space(last):
        return b""
    if not tail_is_event(last, decode):
        problems.append(
            LineProblem(name, number, "torn last line (no trailing newline)")
        )
        return last
    before = len(problems)
    walk_line(name, number, last, start, decode, keep, problems)
    if len(problems) == before:
        problems.append(LineProblem(name, number, "last line has no trailing newline"))
    return b""


def read_shard_bytes(name: str, data: bytes) -> ShardRead:
    """Parse one shard's bytes into events and problems."""
    # The codec loads with the first shard parsed: a read answered from the model
    # parses none (~11 ms of imports saved per command).
    from kgai_tui.core.wire.codec import decode_line

    shard = ShardRead(name=name, size=len(data), newline_count=data.count(b"\n"))

    def keep(decoded: DecodedLine, number: int, offset: int, length: int) -> None:
        shard.events.append(ShardEvent(decoded, name, number))

    shard.problems, shard.torn_tail = walk_shard(name, data, decode_line, keep)
    return shard


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_shard_file(path: Path) -> tuple[bytes, os.stat_result] | LineProblem:
    """A shard's bytes and its ``fstat`` taken before they were read, or the problem
    that an unreadable or non-regular file is (never a failure, never a hang).

    Only a regular file is read (:func:`regular_file.open_regular`), and never past
    the size it had when opened.
    """
    try:
        with open_regular(path) as f:
            return f.read(), f.stat
    except NotRegularError as exc:
        reason = f"not a regular file ({exc.strerror}): not read"
        return LineProblem(safe_name(path.name), 0, reason)
    except OSError as exc:
        return LineProblem(
            path.name, 0, f"cannot read the shard: {exc.strerror or exc}"
        )


def read_shard(path: Path) -> ShardRead:
    """Read one shard file from disk; an unreadable file is a problem, not a failure."""
    read = read_shard_file(path)
    if isinstance(read, LineProblem):
        return ShardRead(name=path.name, size=0, newline_count=0, problems=[read])
    return read_shard_bytes(path.name, read[0])


def read_log(log_dir: Path) -> list[ShardRead]:
    """Read every shard of a log directory, in name order."""
    return [read_shard(log_dir / name) for name in shard_names(log_dir)]
