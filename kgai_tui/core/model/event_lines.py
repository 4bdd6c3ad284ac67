"""Find an event's line in the shards by its hash, for a store read through its model.

The model keeps no line offsets (they would cost a column per decision for the
rare read that wants the whole event: a decision's full record, the place of an
unknown op). An event is content-addressed, so its line is found by its hash
instead: a canonical line starts with ``{"hash":"<hash>"``, and those bytes appear
nowhere else in a line (a quote inside a string is escaped). Every candidate is
decoded and must pass both gates, so what is returned is the applied event itself
whatever else a hostile shard holds. A writer's own shard is searched first.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator, Sequence
from pathlib import Path

from kgai_tui.core.errors import LineError
from kgai_tui.core.store.regular_file import open_regular
from kgai_tui.core.store.shards import trim_go_space
from kgai_tui.core.wire.codec import DecodedLine, decode_line
from kgai_tui.core.wire.limits import MAX_LINE_BYTES
from kgai_tui.core.wire.model import Event

_SUFFIX = ".ndjson"


def _mapped(path: Path) -> mmap.mmap | bytes | None:
    try:
        with open_regular(path) as f:
            return f.map(populate=False)
    except OSError:
        return None


def _lines_with(
    data: mmap.mmap | bytes, event_hash: str
) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` of each line that, trimmed as the scan trims it, starts
    with this hash's key."""
    needle = b'{"hash":"' + event_hash.encode("utf-8", "surrogateescape") + b'"'
    at = data.find(needle)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        stop = len(data) if end == -1 else end
        if stop - start >= MAX_LINE_BYTES:  # the scan parses no such line
            at = data.find(needle, at + 1)
            continue
        raw = bytes(data[start:stop])
        line = raw if raw[:1] == b"{" and raw[-1:] == b"}" else trim_go_space(raw)
        if raw.find(line) == at - start:
            yield at, line
        at = data.find(needle, at + 1)


def _parsed(line: bytes, event_hash: str) -> DecodedLine | None:
    try:
        decoded = decode_line(line)
    except (LineError, ValueError, UnicodeError):
        return None
    return decoded if decoded.event.hash == event_hash else None


def _applied(line: bytes, event_hash: str) -> Event | None:
    decoded = _parsed(line, event_hash)
    if decoded is None or not (decoded.hash_ok and decoded.decision_id_ok):
        return None
    return decoded.event


def _search_order(names: Sequence[str], install: str) -> list[str]:
    own = install + _SUFFIX
    return ([own] if own in names else []) + [n for n in names if n != own]


def find_event(
    log_dir: Path, names: Sequence[str], event_hash: str, install: str = ""
) -> Event | None:
    """The applied event with this hash (both gates pass), or ``None``."""
    for name in _search_order(names, install):
        data = _mapped(log_dir / name)
        if data is None:
            continue
        try:
            for _, raw in _lines_with(data, event_hash):
                event = _applied(raw, event_hash)
                if event is not None:
                    return event
        finally:
            if isinstance(data, mmap.mmap):
                data.close()
    return None


def event_place(log_dir: Path, names: Sequence[str], event_hash: str) -> str:
    """``log/<shard>:<line>`` of the last parsed line claiming this hash (shard
    name order, as :meth:`Engine.where <kgai_tui.core.engine.engine.Engine.where>`
    answers), else ``?``."""
    found = "?"
    for name in names:
        data = _mapped(log_dir / name)
        if data is None:
            continue
        try:
            for at, line in _lines_with(data, event_hash):
                if _parsed(line, event_hash) is not None:
                    number = bytes(data[:at]).count(b"\n") + 1
                    found = f"log/{name}:{number}"
        finally:
            if isinstance(data, mmap.mmap):
                data.close()
    return found
