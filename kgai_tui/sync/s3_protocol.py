"""The reference's S3 segment protocol, pure (spec 7.2, 7.3): URLs, keys, plans, bodies.

Nothing here talks to a network or a disk. Objects are write-once segments
``<prefix>/segments/<installId>/<seq %06d>-<count>.ndjson``; a push uploads the
local events past the remote's cumulative count as the next seq, a pull fetches
the segments (or their tails) that a local shard does not hold yet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl

from kgai_tui.core.errors import LineError, UsageError
from kgai_tui.core.store.install_ids import is_install_id
from kgai_tui.core.store.shards import safe_name, trim_go_space
from kgai_tui.core.wire.codec import decode_line, marshal_event
from kgai_tui.core.wire.plain_line import verify_plain
from kgai_tui.sync.run import SyncError
from kgai_tui.sync.shard import PulledLine

__all__ = [
    "DEFAULT_REGION",
    "ForkError",
    "S3Url",
    "SegmentError",
    "SegmentKey",
    "fork_error",
    "group_segments",
    "parse_key",
    "parse_s3_url",
    "plan_pull",
    "plan_push",
    "segment_key",
    "segments_prefix",
    "twin_seq",
    "verify_segment",
]

DEFAULT_REGION: Final = "us-east-1"
#: The reference's key pattern, with Go's ASCII ``\d`` and ``$`` (no final newline).
_KEY: Final = re.compile(r"(?:^|/)segments/([^/]+)/([0-9]{6})-([0-9]+)\.ndjson\Z")
_GO_INT_MAX: Final = 2**63 - 1
_BUCKET: Final = re.compile(r"[A-Za-z0-9._-]{3,255}")
_SHOWN: Final = 80


class ForkError(SyncError):
    """Two live installations write one install id: the store was copied."""


class SegmentError(ValueError):
    """A segment the protocol rejects whole (malformed, bad hash, wrong install)."""


@dataclass(frozen=True, slots=True)
class S3Url:
    """``s3://bucket[/prefix][?profile=NAME&region=REGION]``, parsed."""

    bucket: str
    prefix: str
    profile: str = ""
    region: str = ""


def parse_s3_url(url: str) -> S3Url:
    """Parse an ``s3://`` remote as the reference does (query first, prefix trimmed).

    Raises:
        UsageError: not ``s3://``, no usable bucket name, or a prefix with ``.``
            or ``..`` segments (Go's ``path.Join`` would move it elsewhere).
    """
    if not url.startswith("s3://"):
        raise UsageError(f"not an s3:// remote: {safe_name(url)[:_SHOWN]!r}")
    rest, _, query = url[len("s3://") :].partition("?")
    bucket, _, prefix = rest.partition("/")
    if not _BUCKET.fullmatch(bucket):
        raise UsageError(
            f"bad S3 remote {safe_name(url)[:_SHOWN]!r}: the bucket name must be 3 to "
            "255 of letters, digits, '.', '-' and '_' (s3://bucket[/prefix])"
        )
    parts = [p for p in prefix.strip("/").split("/") if p]
    if any(p in (".", "..") or not p.isprintable() for p in parts):
        raise UsageError(
            f"bad S3 remote {safe_name(url)[:_SHOWN]!r}: the prefix may not hold "
            "'.' or '..' segments or control characters"
        )
    values: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(key, value)  # url.Values.Get: the first value
    return S3Url(
        bucket, "/".join(parts), values.get("profile", ""), values.get("region", "")
    )


@dataclass(frozen=True, slots=True)
class SegmentKey:
    """One segment object: its writer, seq, declared event count and whole key."""

    install: str
    seq: int
    count: int
    key: str


def parse_key(key: str) -> SegmentKey | None:
    """Parse a segment key; ``None`` for anything else (a 5-digit seq, count 0)."""
    match = _KEY.search(key)
    if match is None:
        return None
    count = int(match.group(3))
    if count <= 0 or count > _GO_INT_MAX:
        return None
    return SegmentKey(match.group(1), int(match.group(2)), count, key)


def segments_prefix(prefix: str) -> str:
    """Where every segment lives: ``<prefix>/segments/`` (``segments/`` alone)."""
    return f"{prefix}/segments/" if prefix else "segments/"


def segment_key(prefix: str, install: str, seq: int, count: int) -> str:
    """The key of a new segment (``path.Join`` of a clean prefix)."""
    return f"{segments_prefix(prefix)}{install}/{seq:06d}-{count}.ndjson"


def group_segments(
    keys: Iterable[str],
) -> tuple[dict[str, list[SegmentKey]], list[str]]:
    """Group the segment keys by install, each sorted by seq.

    Returns:
        The groups and the keys refused because the install part could never
        name a shard file (``..``, capitals, spaces), shown safely.
    """
    groups: dict[str, list[SegmentKey]] = {}
    refused: list[str] = []
    for key in keys:
        seg = parse_key(key)
        if seg is None:
            continue
        if not is_install_id(seg.install):
            refused.append(safe_name(key)[:200])
            continue
        groups.setdefault(seg.install, []).append(seg)
    for segs in groups.values():
        segs.sort(key=lambda s: (s.seq, s.count))
    return groups, refused


def twin_seq(segs: Sequence[SegmentKey]) -> int | None:
    """A seq two segments share (two writers raced with different counts), if any."""
    seen: set[int] = set()
    for seg in segs:
        if seg.seq in seen:
            return seg.seq
        seen.add(seg.seq)
    return None


def plan_push(local: int, segs: Sequence[SegmentKey]) -> tuple[int, int] | None:
    """``(first local index to upload, seq)``, or ``None`` when in step (PlanPush).

    Raises:
        ValueError: the remote holds more events than the local shard (a fork).
    """
    cum = sum(s.count for s in segs)
    if cum > local:
        raise ValueError(f"remote holds {cum} events, this store {local}")
    if cum == local:
        return None
    last = segs[-1].seq if segs else 0
    return cum, last + 1


def plan_pull(local: int, segs: Sequence[SegmentKey]) -> list[tuple[SegmentKey, int]]:
    """The segments to fetch and how many leading events of each we hold (PlanPull)."""
    out: list[tuple[SegmentKey, int]] = []
    cum = 0
    for seg in segs:
        if cum + seg.count > local:
            out.append((seg, max(0, local - cum)))
        cum += seg.count
    return out


def _shown_hash(value: str) -> str:
    return safe_name(value)[:_SHOWN]


def verify_segment(body: bytes, install: str) -> list[PulledLine]:
    """Verify a segment; any bad line rejects all of it (``decodeSegment``).

    A plain canonical line is checked by :func:`verify_plain` (one pattern, two
    hashes, no decode); any other line is decoded. Each line is kept as its
    canonical bytes (what the reference's ``AppendForeign`` writes back).

    Raises:
        SegmentError: ``malformed event: …``, ``event <h> fails hash verification``
            or ``event <h> claims install <x> but lives under <y>``.
    """
    out: list[PulledLine] = []
    own = install.encode()
    for raw in body.split(b"\n"):
        line = trim_go_space(raw)
        if not line:
            continue
        plain = verify_plain(line)
        if plain is not None and plain[1]["install"] == own:
            lamport, m = plain
            parent = m["parent"]
            out.append(
                PulledLine(
                    line,
                    line[9:80].decode(),
                    install,
                    "" if parent is None else parent.decode(),
                    lamport,
                    True,
                )
            )
            continue
        try:
            decoded = decode_line(line)
        except (LineError, RecursionError, ValueError) as exc:
            raise SegmentError(f"malformed event: {exc}") from exc
        ev = decoded.event
        if not decoded.hash_ok:
            raise SegmentError(f"event {_shown_hash(ev.hash)} fails hash verification")
        if ev.install_id != install:
            raise SegmentError(
                f"event {_shown_hash(ev.hash)} claims install "
                f"{safe_name(ev.install_id)[:_SHOWN]} but lives under {install}"
            )
        out.append(
            PulledLine.of(decoded, line if decoded.canonical else marshal_event(ev))
        )
    return out


def fork_error(install: str, detail: str) -> ForkError:
    """The reference's fork error, naming the fix, on one line (the CLI shows one)."""
    return ForkError(
        f"shard fork detected for install {install}: this store and another live "
        "installation share one identity — the store was probably copied "
        f"({detail}). Run `kgai-tui rotate` (or `kg rotate`) in THIS store, then "
        "sync again: the store takes a new install id and records its unpushed "
        "decisions again under it, and the other installation keeps the old one"
    )
