"""Scan a store's shards into compact columns: where each event is and whether it passed.

This is the expensive half of an open (parse and verify every line), so it runs per
shard, in worker processes when there is more than one core, and hands back only
what the replay needs: byte offsets, lamports, hashes and gate flags per event, never
the decoded events themselves (those would cost gigabytes at a million decisions).
The replay re-parses each line from the file when it applies it.
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.store.decision_fields import PLAIN_GROUPS, FieldColumns, PackedFields
from kgai_tui.core.store.hash_column import HashColumn
from kgai_tui.core.store.shard_print import EDGE_BYTES, ShardPrint, appended_bytes
from kgai_tui.core.store.shards import (
    LineProblem,
    read_shard_file,
    tail_is_event,
    walk_line,
    walk_tail,
)
from kgai_tui.core.wire.limits import MAX_LINE_BYTES
from kgai_tui.core.wire.linecheck import CheckedLine, check_line
from kgai_tui.core.wire.plain_line import NOT_PLAIN, verify_plain_at

HASH_OK: Final = 1
DECISION_ID_OK: Final = 2
CANONICAL: Final = 4
_ALL_OK: Final = HASH_OK | DECISION_ID_OK | CANONICAL
_NL: Final = ord("\n")
_PLAIN_OR_NL: Final = bytes(b for b in range(256) if not NOT_PLAIN[b])
TAIL_BYTES: Final = EDGE_BYTES  # the fingerprint's tail (shard_print)


@dataclass(slots=True)
class ShardScan:
    """One shard as scanned: per parsed event, in file order, its place and gates."""

    name: str
    size: int
    newline_count: int
    tail_sha: str = ""
    # The file offset the scanned bytes start at (a tail's; 0 for a whole file).
    start: int = 0
    # The rest of the file's fingerprint (shard_print), taken before it was read.
    head_sha: str = ""
    inode: int = 0
    mtime_ns: int = 0
    ctime_ns: int = 0
    offsets: array[int] = field(default_factory=lambda: array("q"))
    lengths: array[int] = field(default_factory=lambda: array("q"))
    lines: array[int] = field(default_factory=lambda: array("q"))
    lamports: array[int] = field(default_factory=lambda: array("q"))
    # A cold open's clean shards hold theirs as bytes (hash_column).
    hashes: list[str] | HashColumn = field(default_factory=list)
    flags: bytearray = field(default_factory=bytearray)
    problems: list[LineProblem] = field(default_factory=list)
    torn_tail: bytes = b""
    # Events (by index) whose first parent is not the previous event's hash.
    chain_breaks: list[int] = field(default_factory=list)
    # Canonical dicts of lines that are not canonical bytes (rare): re-parsing their
    # raw bytes with orjson would not give Go's reading of them.
    slow: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Decision fields per event, when asked for (a cold open's verifiers), packed.
    fields: PackedFields | None = None

    @property
    def install_id(self) -> str:
        """The writer's install id, from the file name."""
        return self.name[: -len(".ndjson")]

    def __len__(self) -> int:
        """The number of parsed events."""
        return len(self.hashes)

    def shard_print(self) -> ShardPrint:
        """The fingerprint of the file as it was when these columns were read."""
        return ShardPrint(
            self.name,
            self.size,
            self.inode,
            self.mtime_ns,
            self.ctime_ns,
            self.head_sha,
            self.tail_sha,
        )


def scan_bytes(
    name: str,
    data: bytes,
    *,
    start: int = 0,
    prev_hash: str | None = None,
    fields: bool = False,
) -> ShardScan:
    """Scan one shard's bytes (``start`` > 0 scans only an appended tail).

    ``prev_hash`` is the hash of the event before ``start``, to check the chain
    across the join. With ``fields``, each event's decision fields are kept too
    (:mod:`decision_fields`).
    """
    scan = ShardScan(
        name=name, size=len(data), newline_count=data.count(b"\n"), start=start
    )
    scan.tail_sha = hashlib.sha256(data[-TAIL_BYTES:]).hexdigest()
    if not start:
        scan.head_sha = hashlib.sha256(data[:EDGE_BYTES]).hexdigest()
    offsets, lengths, lines = scan.offsets, scan.lengths, scan.lines
    lamports, hashes, flags, slow = scan.lamports, scan.hashes, scan.flags, scan.slow
    breaks = scan.chain_breaks
    cols = FieldColumns() if fields else None
    add_row = None if cols is None else cols.rows.append

    def keep(checked: CheckedLine, number: int, offset: int, length: int) -> None:
        obj = checked.obj
        if cols is not None:
            cols.add_obj(obj)
        if not checked.canonical:
            slow[len(hashes)] = obj
        before = hashes[-1] if hashes else prev_hash
        if before is not None:
            parents = obj["parents"]
            if not parents or parents[0] != before:
                breaks.append(len(hashes))
        offsets.append(offset + start)
        lengths.append(length)
        lines.append(number)
        lamports.append(obj["lamport"])
        hashes.append(obj["hash"])
        flags.append(
            (HASH_OK if checked.hash_ok else 0)
            | (DECISION_ID_OK if checked.decision_id_ok else 0)
            | (CANONICAL if checked.canonical else 0)
        )

    problems = scan.problems
    ends, odd = line_ends(data, vector=len(data) >= VECTOR_BYTES)
    starts = [0, *(e + 1 for e in ends[:-1])] if ends else []
    prev = None if prev_hash is None else prev_hash.encode()
    for i, (pos, end) in enumerate(zip(starts, ends, strict=True)):
        length = end - pos
        # The common line: plain canonical bytes that pass both gates, shown by one
        # pattern and two hashes; everything else takes the exact path, line by line.
        verified = (
            None
            if i in odd or not length or length >= MAX_LINE_BYTES
            else verify_plain_at(data, pos, end)
        )
        if verified is None:
            walk_line(name, i + 1, data[pos:end], pos, check_line, keep, problems)
            if hashes:
                prev = hashes[-1].encode("utf-8", "surrogatepass")
        else:
            lamport, m = verified
            if add_row is not None:
                add_row(m.group(*PLAIN_GROUPS))
            ev_hash = data[pos + 9 : pos + 80]
            if prev is not None and m["parent"] != prev:
                breaks.append(len(hashes))
            prev = ev_hash
            offsets.append(pos + start)
            lengths.append(length)
            lines.append(i + 1)
            lamports.append(lamport)
            hashes.append(ev_hash.decode())
            flags.append(_ALL_OK)
    tail_at = ends[-1] + 1 if ends else 0
    last = data[tail_at:]  # bytes after the final newline: empty unless torn
    if last:
        scan.torn_tail = walk_tail(
            name, len(ends) + 1, last, tail_at, check_line, keep, problems
        )
    if cols is not None:
        scan.fields = cols.pack()
    return scan


#: From this many bytes on, lines are split with NumPy (a cold open's whole shards);
#: below, in plain Python, so a write scanning the line it appended never imports
#: NumPy (~0.1-0.2 s of a ``record``).
VECTOR_BYTES: Final = 1 << 20


def line_ends(data: bytes, *, vector: bool) -> tuple[list[int], set[int]]:
    """Where each line of ``data`` ends (its newline's offset), and the indices of
    the lines holding a byte a plain line cannot hold (the torn tail's index is the
    number of ends). ``vector``: with NumPy, for large data; both give the same."""
    odd: set[int] = set()
    if vector:
        import numpy as np

        a = np.frombuffer(data, dtype=np.uint8)
        newlines = np.flatnonzero(a == _NL)
        if data.translate(None, _PLAIN_OR_NL):  # some: find where (rare)
            bad = np.array(NOT_PLAIN, dtype=bool)[a]
            odd = set(np.searchsorted(newlines, np.flatnonzero(bad)).tolist())
        return newlines.tolist(), odd
    ends: list[int] = []
    find, at = data.find, data.find(b"\n")
    while at != -1:
        ends.append(at)
        at = find(b"\n", at + 1)
    if data.translate(None, _PLAIN_OR_NL):
        odd = {bisect_left(ends, i) for i, b in enumerate(data) if NOT_PLAIN[b]}
    return ends, odd


def scan_appended(
    log_dir: Path, now: ShardPrint, offset: int, prev_hash: str | None = None
) -> ShardScan | None:
    """The lines appended to the shard ``now`` describes after its first ``offset``
    bytes, scanned (``prev_hash``: as :func:`scan_bytes`): the one way every cache
    reads what was appended since it was written.

    When ``offset`` ends inside a line that was torn then (read as no event: a
    write in flight, which a concurrent ``read()`` can see half done), that line is
    read again from its start, and the scan's ``start`` says so. ``None`` when the
    file was replaced since it was fingerprinted, or ``offset`` ends inside a line
    that was read as an event (a last line without its newline, since extended).
    """
    begin = max(offset - 1, 0)
    data = appended_bytes(log_dir, now, begin)
    if data is None:
        return None
    if offset and data[:1] != b"\n":
        torn = _from_torn_line(log_dir, now, offset)
        if torn is None:
            return None
        begin, data = torn
        return scan_bytes(now.name, data, start=begin, prev_hash=prev_hash)
    tail = data[offset - begin :] if offset else data
    return scan_bytes(now.name, tail, start=offset, prev_hash=prev_hash)


def _from_torn_line(
    log_dir: Path, now: ShardPrint, offset: int
) -> tuple[int, bytes] | None:
    """Where the line ``offset`` ends inside starts, and the bytes from there to
    ``now``'s size; ``None`` if its first ``offset`` bytes read as an event (or the
    line is longer than any line read as one, or the file was replaced)."""
    window = TAIL_BYTES
    while True:
        low = max(offset - window, 0)
        data = appended_bytes(log_dir, now, low)
        if data is None:
            return None
        cut = data.rfind(b"\n", 0, offset - low)
        if cut >= 0 or not low:
            at = cut + 1
            if tail_is_event(data[at : offset - low], check_line):
                return None
            return low + at, data[at:]
        if window > MAX_LINE_BYTES:
            return None
        window *= 4


def scan_file(path: Path, *, fields: bool = False) -> ShardScan:
    """Scan one shard file; an unreadable or non-regular file is a problem.

    The file's fingerprint is taken from the ``fstat`` made before its bytes were
    read, so a write during the scan shows as a change on the next open.
    """
    read = read_shard_file(path)
    if isinstance(read, LineProblem):
        return ShardScan(name=path.name, size=0, newline_count=0, problems=[read])
    data, st = read
    scan = scan_bytes(path.name, data, fields=fields)
    scan.inode, scan.mtime_ns, scan.ctime_ns = st.st_ino, st.st_mtime_ns, st.st_ctime_ns
    return scan
