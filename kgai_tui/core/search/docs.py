"""The documents of the search index, as plain records (no tantivy here).

Two kinds of document sets are built:

* **history**: one record per hash-verified decision *event* (every shard line that
  carries a decision), built from the event alone, so the set only ever grows as the
  log grows and is the same however and in whatever order the log was read. The names
  and kinds of the shaped elements are those the event itself upserts.
* **live**: one record per current element (stubs included) and per decision in force
  (a head of at least one element), built from the current projection, so it is a pure
  function of the replayed state and is rebuilt whole when that state changes.

A record holds the analysed text fields (``title``, ``elnames``, ``body``, ``meta`` for
decisions; ``name``, ``kind``, ``props`` for elements), the exact-match filter fields,
the recorded time and a stored display payload. The index document adds ``exact``:
the text fields joined by newlines, indexed unstemmed (exact matches rank first).
"""

from __future__ import annotations

import calendar
import functools
import hashlib
import re
import time
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import orjson

from kgai_tui.core.gosem.gotext import normalize, parse_rfc3339
from kgai_tui.core.search.query import compounds, split_camel
from kgai_tui.core.wire.codec import event_obj

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.wire.model import Event

__all__ = [
    "KEY_BIN_SHIFT",
    "LIVE_KEYS",
    "NO_TIME",
    "DocRecord",
    "decision_key",
    "decision_key_prefix",
    "element_attrs",
    "element_key_prefixes",
    "epoch_of",
    "history_fields",
    "history_record",
    "history_record_obj",
    "index_fields",
    "live_decision",
    "live_element",
    "live_key",
    "live_members",
    "live_records",
    "record_bytes",
    "record_order",
]

#: The ``time`` of a document whose ``recorded_at`` does not parse (never in as-of).
NO_TIME: Final = 2**63 - 1
#: ``kbin`` is ``key >> KEY_BIN_SHIFT``: an indexed coarse key (65,536 values) that
#: lets a narrow key range find its few documents without scanning the ``key``
#: column, where indexing ``key`` itself (a unique term per document) made the full
#: build a third slower.
KEY_BIN_SHIFT: Final = 48
_DEC_ID: Final = re.compile(r"d_[0-9a-f]{16}")
_CANONICAL_TIME: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\Z"
)


class DocRecord(NamedTuple):
    """One document of the index, before analysis.

    Attributes:
        doctype: ``"decision"`` or ``"element"``.
        id: The decision id or element id.
        key: The stable integer used for tie-breaking (ordered like ``id``).
        text: Analysed text fields, by field name.
        filters: Exact-match filter terms, by field name.
        time: Recorded time in Unix seconds (:data:`NO_TIME` when unknown).
        disp: The stored display payload (JSON bytes).
    """

    doctype: str
    id: str
    key: int
    text: tuple[tuple[str, str], ...]
    filters: tuple[tuple[str, tuple[str, ...]], ...]
    time: int
    disp: bytes


def decision_key(dec_id: str) -> int:
    """Return the tie-break key of a decision id: its first 64 bits of hex.

    Well-formed ids (``d_`` + hex) keep their string order; anything else (only
    possible for events whose decision id does not verify) gets a hashed key.
    """
    if _DEC_ID.match(dec_id):
        return int(dec_id[2:18], 16)
    return int(
        hashlib.sha256(dec_id.encode("utf-8", "surrogatepass")).hexdigest()[:16], 16
    )


@functools.lru_cache(maxsize=1 << 12)
def _day_start(date: str) -> int:
    """Unix time of ``YYYY-MM-DD`` 00:00 UTC, or -1 when Go would refuse the date."""
    year, month, day = int(date[:4]), int(date[5:7]), int(date[8:10])
    if year < 1 or not 1 <= month <= 12:
        return -1
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return -1
    return calendar.timegm((year, month, day, 0, 0, 0, 0, 0, 0))


_SECONDS: Final = {f"{sec:02d}": sec for sec in range(60)}
_CANONICAL_MINUTE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}\Z")


@functools.lru_cache(maxsize=1 << 12)
def _minute_start(prefix: str) -> int:
    """Unix time of an ASCII ``YYYY-MM-DDTHH:MM``, or -1 (then the full parse decides).

    A full build converts a million times that share a few thousand minutes.
    """
    if not (prefix.isascii() and _CANONICAL_MINUTE.match(prefix)):
        return -1
    start = _day_start(prefix[:10])
    hour, minute = int(prefix[11:13]), int(prefix[14:16])
    if start < 0 or hour > 23 or minute > 59:
        return -1
    return start + hour * 3600 + minute * 60


def epoch_of(recorded_at: str) -> int:
    """Return the Unix time of an RFC3339 ``recorded_at`` as as-of reads it.

    Returns:
        Seconds since the epoch, or :data:`NO_TIME` when it does not parse.
    """
    s = recorded_at
    if len(s) == 20 and s[19] == "Z" and s[16] == ":":
        sec = _SECONDS.get(s[17:19])
        if sec is not None:
            base = _minute_start(s[:16])
            if base >= 0:
                return base + sec
    if not _CANONICAL_TIME.match(s):
        moment = parse_rfc3339(s)
        return NO_TIME if moment is None else int(moment.timestamp())
    start = _day_start(s[:10])
    hour, minute, sec = int(s[11:13]), int(s[14:16]), int(s[17:19])
    if start < 0 or hour > 23 or minute > 59 or sec > 59:
        return NO_TIME
    return start + hour * 3600 + minute * 60 + sec


def _rfc3339(stamp: int) -> str:
    t = time.gmtime(stamp)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
        f"T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}Z"
    )


_norm: Final = functools.lru_cache(maxsize=1 << 16)(normalize)


def history_record(ev: Event, id_ok: bool) -> DocRecord | None:
    """Build the history document of one decision event (``None`` without one).

    Args:
        ev: A hash-verified event.
        id_ok: Whether its decision id verifies (documents that do not are only
            searched by as-of, which applies the hash gate alone).

    Returns:
        The record, or ``None`` when the event carries no decision.
    """
    return history_record_obj(event_obj(ev), id_ok)


def history_record_obj(obj: dict[str, Any], id_ok: bool) -> DocRecord | None:
    """Build the history document of one event from its canonical dict.

    The index build reads a million lines; decoding each into an :class:`Event`
    first cost more than the rest of the build, so this reads the dict the shard
    reader returns (already checked canonical, so every value has its type; fields
    Go omits when empty are absent).

    Args:
        obj: The event's canonical dict (``codec.event_obj`` form).
        id_ok: Whether its decision id verifies.

    Returns:
        The record, or ``None`` when the event carries no decision.
    """
    d = obj["decision"]
    if d is None:
        return None
    shaped = list(dict.fromkeys(d.get("shapes", ())))
    if "" in shaped:
        shaped.remove("")
    names: list[str] = []
    kinds: list[str] = []
    if shaped:
        declared: dict[str, dict[str, Any]] = {}
        for m in d["mutations"] or ():
            if m["op"] == "upsert_element":
                declared.setdefault(m.get("element_id", ""), m)
        for e in shaped:
            found = declared.get(e)
            if found is not None:
                names.append(found.get("name", ""))
                kinds.append(_norm(found.get("kind", "")))
        kinds = sorted(set(kinds) - {""})
    dec_id, title = d["id"], d["title"]
    rationale, summary = d.get("rationale", ""), d.get("summary", "")
    author, install, at = d.get("author", ""), obj["install_id"], obj["recorded_at"]
    return DocRecord(
        "decision",
        dec_id,
        decision_key(dec_id),
        (
            ("title", title),
            ("elnames", "\n".join(names)),
            ("body", rationale + "\n" + summary),
            ("meta", author + "\n" + install),
        ),
        (
            ("f_kind", tuple(kinds)),
            ("f_author", (_norm(author),)),
            ("f_writer", (_norm(install),)),
            ("f_el", tuple(shaped)),
            ("flags", () if id_ok else ("badid",)),
        ),
        epoch_of(at),
        _display(dec_id, title, rationale, summary, shaped, obj["lamport"], at),
    )


@functools.lru_cache(maxsize=1 << 12)
def _writer_fields(author: str, install: str) -> tuple[str, str, str]:
    """The ``meta`` text and the two filter terms of an (author, install) pair.

    A store has few writers, and a full build asks for them a million times.
    """
    return split_camel(author + "\n" + install), _norm(author), _norm(install)


def history_fields(obj: dict[str, Any], id_ok: bool) -> dict[str, Any] | None:
    """The index fields of one event's history document, built in one step.

    Equal to ``index_fields(history_record_obj(obj, id_ok), typed=False)`` (the tests
    check it), without the intermediate record: a full build makes a million of
    these on the same core that parses the lines, while tantivy indexes on the other.

    Returns:
        Field values by name (empty values left out), or ``None`` without a decision.
    """
    d = obj["decision"]
    if d is None:
        return None
    dec_id, title = d["id"], d["title"]
    rationale, summary = d.get("rationale", ""), d.get("summary", "")
    author, at = d.get("author", ""), obj["recorded_at"]
    meta, norm_author, norm_install = _writer_fields(author, obj["install_id"])
    key = decision_key(dec_id)
    fields: dict[str, Any] = {
        "body": split_camel(rationale + "\n" + summary),
        "meta": meta,
        "key": key,
        "kbin": key >> KEY_BIN_SHIFT,
        "time": epoch_of(at),
    }
    texts = []
    elnames_raw = ""
    if title:
        fields["title"] = split_camel(title)
        texts.append(fields["title"])
    shapes = d.get("shapes")
    shaped: list[str] = []
    if shapes:
        shaped = list(dict.fromkeys(shapes)) if len(shapes) > 1 else list(shapes)
        if "" in shaped:
            shaped.remove("")
    if shaped:
        fields["f_el"] = shaped
        declared: dict[str, dict[str, Any]] = {}
        for m in d["mutations"] or ():
            if m["op"] == "upsert_element":
                declared.setdefault(m.get("element_id", ""), m)
        names = []
        kinds = set()
        for e in shaped:
            found = declared.get(e)
            if found is not None:
                names.append(found.get("name", ""))
                kinds.add(_norm(found.get("kind", "")))
        elnames = elnames_raw = "\n".join(names)
        if elnames:
            fields["elnames"] = split_camel(elnames)
            texts.append(fields["elnames"])
        kinds.discard("")
        if kinds:
            fields["f_kind"] = sorted(kinds)
    texts.append(fields["body"])
    texts.append(meta)
    whole = " ".join(
        c for c in map(compounds, (title, elnames_raw, rationale, summary)) if c
    )
    if whole:
        texts.append(whole)
    fields["exact"] = "\n".join(texts)
    if norm_author:
        fields["f_author"] = [norm_author]
    if norm_install:
        fields["f_writer"] = [norm_install]
    if not id_ok:
        fields["flags"] = ["badid"]
    fields["disp"] = _display(
        dec_id, title, rationale, summary, shaped, obj["lamport"], at
    )
    return fields


def _display(
    dec_id: str,
    title: str,
    rationale: str,
    summary: str,
    shaped: list[str],
    lamport: int,
    at: str,
) -> bytes:
    """A history hit's stored display record (the same bytes on both build paths)."""
    return orjson.dumps(
        {
            "id": dec_id,
            "title": title,
            "rationale": rationale,
            "summary": summary,
            "shapes": shaped,
            "lamport": lamport,
            "at": at,
        }
    )


def index_fields(rec: DocRecord, *, typed: bool = True) -> dict[str, Any]:
    """The field values of a record's index document (empty values left out).

    ``typed=False`` leaves out ``doctype``: the history index holds decisions only,
    so the field would be one constant term per document (work for the build, and a
    filter matching everything for each query).
    """
    out: dict[str, Any] = {"doctype": rec.doctype} if typed else {}
    texts = []
    whole = []
    for name, text in rec.text:
        if text:
            out[name] = split_camel(text)
            texts.append(out[name])
            if name != "meta" and (found := compounds(text)):
                whole.append(found)
    if whole:
        texts.append(" ".join(whole))
    if texts:
        out["exact"] = "\n".join(texts)
    for name, values in rec.filters:
        kept = [v for v in values if v]
        if kept:
            out[name] = kept
    out["key"] = rec.key
    out["kbin"] = rec.key >> KEY_BIN_SHIFT
    out["time"] = rec.time
    out["disp"] = rec.disp
    return out


_HIGH: Final = 1 << 63
_EL_ID: Final = re.compile(r"el_[0-9a-f]{16}")


def live_key(doctype: str, rid: str) -> int:
    """Return the stable key of a live document, ordered like ``(kind, id)``.

    Decisions take the lower half of the key space and elements the upper half (a
    decision id ``d_…`` sorts before an element id ``el_…``); within each half the
    key is the first 63 bits of the id's hex (hashed for ids of another shape).
    """
    if doctype == "decision":
        return decision_key(rid) >> 1
    if _EL_ID.match(rid):
        return _HIGH | int(rid[3:19], 16) >> 1
    digest = hashlib.sha256(rid.encode("utf-8", "surrogatepass")).hexdigest()
    return _HIGH | int(digest[:16], 16) >> 1


def decision_key_prefix(key: int) -> str:
    """The 16 hex digits after ``d_`` that a well-formed id of this
    :func:`decision_key` starts with (ids of another shape have hashed keys)."""
    return f"{key:016x}"


def element_key_prefixes(key: int) -> tuple[str, str] | None:
    """The first and last 16-hex-digit prefix (after ``el_``) of the well-formed
    element ids of this :func:`live_key` (the key keeps the prefix's 63 high bits),
    or ``None`` for a key outside the elements' half."""
    if key < _HIGH:
        return None
    prefix = (key - _HIGH) << 1
    return f"{prefix:016x}", f"{prefix + 1:016x}"


#: Key bounds ``[low, high)`` of live documents by type.
LIVE_KEYS: Final = {
    ("decision",): (0, _HIGH),
    ("element",): (_HIGH, 1 << 64),
    ("decision", "element"): (0, 1 << 64),
}


def live_decision(
    p: ProjectionView, attrs: dict[str, dict[str, Any]], idx: int
) -> DocRecord:
    """The live document of decision ``idx`` (a decision in force), from the projection.

    Args:
        p: The projection.
        attrs: Element attributes by id (``kind``, ``name``, ``props``).
        idx: The decision's index in the projection.
    """
    shaped = p.dec_shapes[idx]
    nodes = [attrs[e] for e in shaped]
    names = sorted(n["name"] for n in nodes if n["name"])
    kinds = sorted({_norm(n["kind"]) for n in nodes} - {""})
    stamp = p.dec_time[idx]
    dec_id = p.dec_id[idx]
    return DocRecord(
        "decision",
        dec_id,
        live_key("decision", dec_id),
        (
            ("title", p.dec_title[idx]),
            ("elnames", "\n".join(names)),
            ("body", p.dec_rationale[idx] + "\n" + p.dec_summary[idx]),
            ("meta", p.dec_author[idx] + "\n" + p.dec_install[idx]),
        ),
        (
            ("f_kind", tuple(kinds)),
            ("f_author", (_norm(p.dec_author[idx]),)),
            ("f_writer", (_norm(p.dec_install[idx]),)),
            ("f_el", tuple(shaped)),
            ("flags", ()),
        ),
        NO_TIME if stamp is None else stamp,
        orjson.dumps(
            {
                "id": dec_id,
                "title": p.dec_title[idx],
                "rationale": p.dec_rationale[idx],
                "summary": p.dec_summary[idx],
                "elements": names,
                "lamport": p.dec_lamport[idx],
                "at": "" if stamp is None else _rfc3339(stamp),
            }
        ),
    )


def live_element(eid: str, attrs: dict[str, Any]) -> DocRecord:
    """The live document of one element (stubs included)."""
    kind, name, props = attrs["kind"], attrs["name"], attrs["props"]
    return DocRecord(
        "element",
        eid,
        live_key("element", eid),
        (("name", name), ("kind", kind), ("props", props)),
        (
            ("f_kind", (_norm(kind),) if kind else ()),
            ("f_name", (_norm(name),) if name else ()),
            ("f_el", (eid,)),
        ),
        NO_TIME,
        orjson.dumps({"id": eid, "kind": kind, "name": name, "props": props}),
    )


def element_attrs(p: ProjectionView) -> dict[str, dict[str, Any]]:
    """Element attributes by id, as a plain dict (faster than the graph's views)."""
    nodes = p.graph.nodes
    return {eid: nodes[eid] for eid in nodes}


def live_members(p: ProjectionView) -> tuple[list[int], list[str]]:
    """The decisions in force (indices) and every element id of a projection."""
    head_idx: set[int] = set()
    for heads in p.heads.values():
        head_idx.update(heads)
    return sorted(head_idx), list(p.graph.nodes)


def live_records(p: ProjectionView) -> list[DocRecord]:
    """The live documents (current elements, decisions in force) in key order."""
    attrs = element_attrs(p)
    decisions, elements = live_members(p)
    out = [live_decision(p, attrs, idx) for idx in decisions]
    out.extend(live_element(eid, attrs[eid]) for eid in elements)
    out.sort(key=record_order)
    return out


def record_order(rec: DocRecord) -> tuple[int, str, str]:
    """The order documents are written in: key, then type, then id."""
    return (rec.key, rec.doctype, rec.id)


def record_bytes(rec: DocRecord) -> bytes:
    """A canonical serialisation of a record (for the live digest)."""
    return (
        orjson.dumps([rec.doctype, rec.id, rec.key, rec.text, rec.filters, rec.time])
        + rec.disp
    )
