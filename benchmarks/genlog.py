"""The reference benchmark log generator (spec 9.1), byte for byte.

:func:`generate` produces the same events as the Go tool ``src/tools/genlog``: a
synthetic team of ``installs`` writers recording ``total`` decisions over ``elems``
feature elements, with per-element supersession chains, links and props. Lines are
built directly from the wire format (one ``json.Marshal``-equivalent dump and two
SHA-256s per event), so a million decisions take seconds, not minutes.

Two layouts can be written from the same events:

* :func:`write_store`: ``OUT/log/<install>.ndjson``, a store kgai-tui (and ``kg``) opens;
* :func:`write_segments`: ``OUT/segments/<install>/000001-<count>.ndjson``, the
  reference tool's upload layout, against which the published digests are checked.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

from kgai_tui.core.gosem.gotext import format_rfc3339
from kgai_tui.core.wire.ids import element_id

__all__ = [
    "BASE_TIME",
    "GenParams",
    "append_store",
    "generate",
    "install_id",
    "write_segments",
    "write_store",
]

#: Every generated ``recorded_at`` is this moment plus ``n`` seconds.
BASE_TIME: Final = datetime(2026, 1, 1, tzinfo=UTC)

_HASH_PREFIX: Final = b'{"hash":"'


@dataclass(frozen=True, slots=True)
class GenParams:
    """The generator's flags (spec 9.1 defaults: 100000, 30, 10000)."""

    total: int = 100_000
    installs: int = 30
    elems: int = 10_000

    def __post_init__(self) -> None:
        """Reject values the reference tool could not run with.

        Raises:
            ValueError: a count is negative, or installs/elems is not positive.
        """
        if self.total < 0 or self.installs <= 0 or self.elems <= 0:
            raise ValueError(
                "total must be >= 0 and installs, elems must be > 0 "
                f"(got {self.total}, {self.installs}, {self.elems})"
            )


def install_id(i: int) -> str:
    """Return the install id of writer ``i`` (``igen%012d``)."""
    return f"igen{i:012d}"


def _element_name(i: int) -> str:
    return f"E{i:06d}"


def _recorded_at(n: int, days: dict[int, str]) -> str:
    """Format ``BASE_TIME + n`` seconds as RFC3339, caching the date part."""
    day, rem = divmod(n, 86400)
    date = days.get(day)
    if date is None:
        date = days[day] = format_rfc3339(BASE_TIME + timedelta(days=day))[:10]
    hour, rem = divmod(rem, 3600)
    minute, sec = divmod(rem, 60)
    return f"{date}T{hour:02d}:{minute:02d}:{sec:02d}Z"


def _mutations(n: int, p: GenParams, el: str, name: str) -> tuple[str, str]:
    """Return the mutations' JSON and the linked target id (``""`` when none)."""
    muts = (
        f'[{{"op":"upsert_element","element_id":"{el}","kind":"feature",'
        f'"name":"{name}","props":{{"batch":"{n // 1000}"}}}}'
    )
    target = ""
    if n % 3 == 0:
        tname = _element_name((n * 7) % p.elems)
        target = element_id("feature", tname)
        muts += (
            f',{{"op":"upsert_element","element_id":"{target}","kind":"feature",'
            f'"name":"{tname}"}},{{"op":"add_link","element_id":"{el}",'
            f'"from_id":"{el}","to_id":"{target}","link_kind":"DEPENDS_ON"}}'
        )
    if n % 5 == 0:
        muts += f',{{"op":"set_prop","element_id":"{el}","key":"rev","value":"{n}"}}'
    return muts + "]", target


def _decision_id(n: int, p: GenParams, installs: list[str], el_ids: list[str]) -> str:
    """The decision id of event ``n`` (title, rationale, author and mutations)."""
    inst = installs[n % p.installs]
    name = _element_name(n % p.elems)
    muts, _ = _mutations(n, p, el_ids[n % p.elems], name)
    id_input = f"decision {n}: reshape {name}".lower() + (
        f"\x00bench decision by {inst}\x00{inst}\x00{muts}"
    )
    return "d_" + hashlib.sha256(id_input.encode()).hexdigest()[:24]


def generate(
    p: GenParams, start: int = 0, last_hashes: Sequence[str | None] | None = None
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(writer index, line)`` for every event, in generation order.

    Each line is the canonical shard line without its trailing newline. Every
    generated string is ASCII without HTML characters or repeated spaces, so Go's
    ``json.Marshal`` output is written directly from templates, and ``Normalize``
    of the title and author is plain lower-casing; the digest test against the
    reference output and a decode-and-verify test keep this honest.

    Args:
        p: The generator parameters (``p.total`` events are produced in all).
        start: Skip events before this one: the supersession chains are
            recomputed, and ``last_hashes`` gives each shard's last event hash.
        last_hashes: Per writer, the hash of its last event before ``start``.

    Yields:
        The writer (shard) index and the event's bytes.
    """
    installs = [install_id(i) for i in range(p.installs)]
    el_ids = [element_id("feature", _element_name(i)) for i in range(p.elems)]
    last_hash: list[str | None] = (
        list(last_hashes) if last_hashes is not None else [None] * p.installs
    )
    head: dict[str, str] = {}
    for n in range(max(0, start - p.elems), start):
        head[el_ids[n % p.elems]] = _decision_id(n, p, installs, el_ids)
    days: dict[int, str] = {}
    sha256 = hashlib.sha256
    for n in range(start, p.total):
        w = n % p.installs
        inst = installs[w]
        name = _element_name(n % p.elems)
        el = el_ids[n % p.elems]
        muts, target = _mutations(n, p, el, name)
        title = f"decision {n}: reshape {name}"
        rationale = f"bench decision by {inst}"
        id_input = f"{title.lower()}\x00{rationale}\x00{inst}\x00{muts}"
        dec_id = "d_" + sha256(id_input.encode()).hexdigest()[:24]
        prev = head.get(el)
        head[el] = dec_id
        supersedes = "" if prev is None else f'"supersedes":["{prev}"],'
        shapes = f'"{el}","{target}"' if target else f'"{el}"'
        parent = last_hash[w]
        parents = "null" if parent is None else f'["{parent}"]'
        tail = (
            f'","op":"assert","actor":"{inst}","install_id":"{inst}",'
            f'"lamport":{n + 1},"recorded_at":"{_recorded_at(n, days)}",'
            f'"parents":{parents},"decision":{{"id":"{dec_id}","title":"{title}",'
            f'"rationale":"{rationale}","author":"{inst}",{supersedes}'
            f'"shapes":[{shapes}],"targets":["{el}"],"mutations":{muts}}}}}'
        ).encode()
        ev_hash = "sha256:" + sha256(_HASH_PREFIX + tail).hexdigest()
        last_hash[w] = ev_hash
        yield w, _HASH_PREFIX + ev_hash.encode() + tail


def _last_hash(path: Path) -> str | None:
    """The hash of the last line of a shard (``None`` for a missing or empty file)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            tail = fh.read()
    except FileNotFoundError:
        return None
    lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
    last = lines[-1]
    if not last.startswith(_HASH_PREFIX):
        return None
    end = last.index(b'"', len(_HASH_PREFIX))
    return last[len(_HASH_PREFIX) : end].decode()


def append_store(out: Path, p: GenParams, count: int) -> int:
    """Append the next ``count`` generated events to a store written by :func:`write_store`.

    The store must hold exactly the first ``p.total`` events of these parameters;
    afterwards it holds the first ``p.total + count``, byte-identical to a store
    generated with that total.

    Args:
        out: The store directory.
        p: The parameters the store was generated with.
        count: How many events to add.

    Returns:
        The number of events appended.
    """
    log = out / "log"
    last = [_last_hash(log / f"{install_id(w)}.ndjson") for w in range(p.installs)]
    more = GenParams(p.total + count, p.installs, p.elems)
    lines: list[list[bytes]] = [[] for _ in range(p.installs)]
    for w, line in generate(more, p.total, last):
        lines[w].append(line + b"\n")
    for w, chunk in enumerate(lines):
        if chunk:
            with open(log / f"{install_id(w)}.ndjson", "ab") as fh:
                fh.write(b"".join(chunk))
    return sum(len(chunk) for chunk in lines)


def _write_shards(p: GenParams, path_of: Callable[[str, int], Path]) -> list[Path]:
    """Stream every shard into a ``.part`` file, then rename; return the paths."""
    tmp_dir = path_of(install_id(0), 0).parent.parent
    tmp_dir.mkdir(parents=True, exist_ok=True)
    parts = [tmp_dir / f".{install_id(w)}.ndjson.part" for w in range(p.installs)]
    counts = [0] * p.installs
    with ExitStack() as stack:
        files = [
            stack.enter_context(open(part, "wb", buffering=1 << 20)) for part in parts
        ]
        for w, line in generate(p):
            files[w].write(line + b"\n")
            counts[w] += 1
    paths = []
    for w, part in enumerate(parts):
        if not counts[w]:
            part.unlink()
            continue
        final = path_of(install_id(w), counts[w])
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, final)
        paths.append(final)
    return paths


def write_store(out: Path, p: GenParams) -> list[Path]:
    """Write ``out/log/<install>.ndjson``, one shard per writer.

    Args:
        out: The store directory (created if needed).
        p: The generator parameters.

    Returns:
        The shard paths, by writer index.
    """
    return _write_shards(p, lambda inst, _: out / "log" / f"{inst}.ndjson")


def write_segments(out: Path, p: GenParams) -> list[Path]:
    """Write the reference layout ``out/segments/<install>/000001-<count>.ndjson``.

    Args:
        out: The output directory (created if needed).
        p: The generator parameters.

    Returns:
        The segment paths, by writer index.
    """
    return _write_shards(
        p, lambda inst, count: out / "segments" / inst / f"000001-{count}.ndjson"
    )
