"""The recall index of the model: array files beside it, named in its ``meta``.

A query maps the files and scores every element exactly as the in-memory
:class:`~kgai_tui.core.recall.index.RecallIndex` does, reading only the postings of
the query's tokens. The files are written once and never changed: a whole build
writes one element file and one segment over every decision; an update appends
decisions to the model, which are scored directly until there are
:data:`SEGMENT_EVERY` of them, and then get a segment file of their own; an update
that changes elements names them (:mod:`kgai_tui.core.recall.element_delta`) and
writes a new element file only once they are many. Decisions whose text or shapes
changed after their segment was written are "stale": killed in their segment and
scored directly. The meta entry records each file's identity (inode, size, times),
checked on every open like the model's seal.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.model import recall_delta
from kgai_tui.core.model.recall_delta import ElementDelta, stored_delta
from kgai_tui.core.model.recall_files import file_identity, recall_dir
from kgai_tui.core.model.rows import ModelCorruptError

if TYPE_CHECKING:
    # The arrays (NumPy) load only when a file is read or written: the usual
    # update (a record on elements that exist, fewer than SEGMENT_EVERY decisions
    # since the last segment) writes none, and imports none (~0.1-0.2 s).
    import numpy.typing as npt

    from kgai_tui.core.recall.fields import Fields
    from kgai_tui.core.recall.index import ElementPart, RecallIndex, SegmentPart
    from kgai_tui.core.recall.segments import Elements
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "SEGMENT_EVERY",
    "load_recall",
    "recall_tidy_due",
    "tidy_recall",
    "update_recall",
    "write_element_file",
    "write_segment_file",
]

#: Appended decisions scored directly before they get a segment file.
SEGMENT_EVERY: Final = 512
#: The element delta file holds at most this share (1/n) of the elements; past
#: it, the element file is written again.
DELTA_FILE_SHARE: Final = 4
#: An update that leaves its housekeeping to a tidy does it itself once this many
#: times the usual amount is waiting: the model's element delta (of
#: :data:`~kgai_tui.core.model.recall_delta.ELEMENT_DELTA_MAX`), the decisions past
#: the last segment (of :data:`SEGMENT_EVERY`), the graph's log. Tidies that keep
#: failing (or keep being overtaken by updates) must not leave every read
#: building the fields of them all, or scoring them one by one.
LATER_SLACK: Final = 4


def _fields_out(prefix: str, f: Fields, arrays: dict[str, npt.NDArray[Any]]) -> Any:
    buckets = []
    for k, b in enumerate(f.vocab.buckets.values()):
        length, first, toks, rev, rev_pos, present = b.parts()
        arrays[f"{prefix}b{k}t"], arrays[f"{prefix}b{k}r"] = toks, rev
        arrays[f"{prefix}b{k}p"] = rev_pos
        buckets.append((length, first, present))
    weights = []
    for k, (w, csr) in enumerate(f.fields):
        arrays[f"{prefix}f{k}p"], arrays[f"{prefix}f{k}m"] = csr.ptr, csr.members
        weights.append(w)
    return {"n": f.n, "size": f.vocab.size, "buckets": buckets, "weights": weights}


def _fields_in(prefix: str, vals: Any, arrays: dict[str, npt.NDArray[Any]]) -> Fields:
    from kgai_tui.core.recall.fields import Csr, Fields
    from kgai_tui.core.recall.vocab import Bucket, Vocab

    # A bucket is (length, first) in files written before its byte set was kept.
    buckets = [
        Bucket.from_parts(
            int(entry[0]),
            int(entry[1]),
            arrays[f"{prefix}b{k}t"],
            arrays[f"{prefix}b{k}r"],
            arrays[f"{prefix}b{k}p"],
            entry[2] if len(entry) > 2 else None,
        )
        for k, entry in enumerate(vals["buckets"])
    ]
    fields = [
        (float(w), Csr(arrays[f"{prefix}f{k}p"], arrays[f"{prefix}f{k}m"]))
        for k, w in enumerate(vals["weights"])
    ]
    return Fields.from_parts(
        int(vals["n"]), Vocab.from_buckets(vals["size"], buckets), fields
    )


# ---------------------------------------------------------------------- files


def _new_name(kind: str) -> str:
    return f"{kind}-{secrets.token_hex(8)}.bin"


def write_element_file(model: Path, part: ElementPart) -> dict[str, Any]:
    """Write an element file; return its meta entry (name and identity)."""
    arrays: dict[str, npt.NDArray[Any]] = {}
    vals = {
        "ids": part.ids,
        "attrs": part.attrs,
        "paths": part.paths,
        "fields": _fields_out("e", part.fields, arrays),
    }
    return _write(model, "el", vals, arrays)


def write_delta_file(
    model: Path, delta: ElementDelta, base_ids: Sequence[str]
) -> dict[str, Any]:
    """Write an element delta file (the elements changed or added since the
    element file ``base_ids`` are of, with their fields); return its meta entry."""
    from kgai_tui.core.recall.segments import element_fields

    attrs = delta.ordered_attrs(base_ids)
    arrays: dict[str, npt.NDArray[Any]] = {}
    vals = {
        "stale": delta.stale,
        "ids": [*(base_ids[k] for k in delta.stale), *delta.new],
        "new": delta.new,
        "attrs": attrs,
        "fields": _fields_out("d", element_fields(attrs), arrays),
    }
    # How many elements it holds: a tidy after the answer writes the element
    # file again once that passes its share (:func:`recall_tidy_due`).
    return {**_write(model, "eld", vals, arrays), "size": len(vals["ids"])}


def write_segment_file(model: Path, part: SegmentPart) -> dict[str, Any]:
    """Write a segment file; return its meta entry (name, identity, decisions)."""
    arrays: dict[str, npt.NDArray[Any]] = {
        "decs": part.decs,
        "shape_lens": part.shape_lens,
        "el_ids": part.el_ids,
        "el_starts": part.el_starts,
        "el_decs": part.el_decs,
    }
    if part.dec_ptr is not None and part.dec_els is not None:
        arrays["dec_ptr"], arrays["dec_els"] = part.dec_ptr, part.dec_els
    vals = {
        "placeholders": part.placeholders,
        "fields": _fields_out("s", part.fields, arrays),
        "shape_total": int(part.shape_lens.sum())
        if part.shape_total is None
        else part.shape_total,
    }
    entry = _write(model, "seg", vals, arrays)
    entry["count"] = len(part.decs)
    return entry


def _write(model: Path, kind: str, vals: Any, arrays: dict[str, Any]) -> dict[str, Any]:
    from kgai_tui.core.model.arrays import write_arrays

    folder = recall_dir(model)
    folder.mkdir(parents=True, exist_ok=True)
    name = _new_name(kind)
    write_arrays(folder / name, vals, arrays)
    return {"file": name, "identity": file_identity(folder / name)}


def _stored_ids(model: Path, recall: dict[str, Any]) -> list[str]:
    """Every stored element id in the order segments number them: the element
    file's, then those its delta file adds (values only: no array, no NumPy)."""
    stored = _base_ids(model, recall)
    filed = _filed_delta(model, recall)
    return stored if filed is None else [*stored, *filed.new]


def _base_ids(model: Path, recall: dict[str, Any]) -> list[str]:
    """The element file's ids."""
    from kgai_tui.core.model.arrays import read_values

    values = _checked(model, recall["elements"], read_values)
    try:
        return list(values["ids"])
    except (KeyError, TypeError) as exc:
        raise ModelCorruptError(
            f"recall file {recall['elements']['file']}: {exc}"
        ) from exc


def _filed_delta(model: Path, recall: dict[str, Any]) -> ElementDelta | None:
    """The element delta file's delta (``None``: the model has none)."""
    from kgai_tui.core.model.arrays import read_values

    entry = recall.get("delta_file")
    if entry is None:
        return None
    return _delta_of(entry, _checked(model, entry, read_values))


def _delta_of(entry: dict[str, Any], values: Any) -> ElementDelta:
    """The delta an element delta file's values hold."""
    try:
        attrs = dict(zip(values["ids"], values["attrs"], strict=True))
        return ElementDelta.from_value((values["stale"], values["new"], attrs))
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelCorruptError(f"recall file {entry['file']}: {exc}") from exc


def _read(model: Path, entry: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from kgai_tui.core.model.arrays import read_arrays

    return _checked(model, entry, read_arrays)  # type: ignore[no-any-return]


def _checked(model: Path, entry: dict[str, Any], reader: Callable[[Path], Any]) -> Any:
    """``reader`` of a recall file still as the model's entry names it."""
    from kgai_tui.core.model.arrays import ArrayFileError

    path = recall_dir(model) / str(entry["file"])
    try:
        if file_identity(path) != entry["identity"]:
            raise ModelCorruptError(f"recall file {path.name} changed")
        return reader(path)
    except (OSError, ArrayFileError) as exc:
        raise ModelCorruptError(f"recall file {path.name}: {exc}") from exc


def load_recall(
    model: Path, p: ProjectionView, recall: dict[str, Any], delta: ElementDelta
) -> RecallIndex:
    """The recall index of a model's snapshot ``p`` (its ``meta`` entries
    ``recall`` and ``recall_delta``)."""
    from kgai_tui.core.recall.index import RecallIndex, SegmentPart

    elements = _elements(model, recall, delta)
    segments = []
    for entry in recall["segments"]:
        vals, arrays = _read(model, entry)
        segments.append(
            SegmentPart(
                arrays["decs"],
                arrays["shape_lens"],
                arrays["el_ids"],
                arrays["el_starts"],
                arrays["el_decs"],
                list(vals["placeholders"]),
                _fields_in("s", vals["fields"], arrays),
                _count(vals.get("shape_total")),
                *_by_decision(arrays),
            )
        )
    return RecallIndex.stored(p, elements, segments, recall["stale"])


def _element_part(model: Path, recall: dict[str, Any]) -> ElementPart:
    from kgai_tui.core.recall.index import ElementPart

    vals, arrays = _read(model, recall["elements"])
    return ElementPart(
        list(vals["ids"]),
        [tuple(a) for a in vals["attrs"]],
        [(int(k), list(paths)) for k, paths in vals["paths"]],
        _fields_in("e", vals["fields"], arrays),
    )


def _elements(model: Path, recall: dict[str, Any], delta: ElementDelta) -> Elements:
    """The element part, with the elements changed or added since it was written
    scored from the delta file's fields, then those changed since scored from
    their attributes now."""
    from kgai_tui.core.recall.segments import Elements

    elements = Elements.from_part(_element_part(model, recall))
    try:
        entry = recall.get("delta_file")
        if entry is not None:  # its values and arrays, read once
            vals, arrays = _read(model, entry)
            fields = _fields_in("d", vals["fields"], arrays)
            elements = _delta_of(entry, vals).elements(elements, fields)
        return delta.elements(elements) if delta else elements
    except ValueError as exc:
        raise ModelCorruptError(str(exc)) from exc


def _spill(
    model: Path,
    recall: dict[str, Any],
    delta: ElementDelta,
    total: int,
    *,
    any_size: bool = False,
) -> dict[str, Any] | None:
    """Write the delta file again with ``delta`` (positions among the element
    file's ids, then the delta file's new ones) folded into it; its meta entry,
    or ``None`` when the delta file would hold more than
    1/:data:`DELTA_FILE_SHARE` of the ``total`` elements (the element file is
    written again instead).

    Writing the element file again tokenizes every element and first loads the
    whole graph (100k elements at 10M decisions: ~2.4 s); the delta file holds
    only the elements changed since, each known with its attributes."""
    base = _base_ids(model, recall)
    n = len(base)
    filed = _filed_delta(model, recall) or ElementDelta()
    stale = set(filed.stale)
    for k in delta.stale:
        if k < n:
            stale.add(k)
        elif k - n >= len(filed.new):  # else one the delta file adds: in its new
            raise ModelCorruptError("the element delta does not fit its files")
    new = [*filed.new, *delta.new]
    if not any_size and (len(stale) + len(new)) * DELTA_FILE_SHARE > total:
        return None
    attrs = {**filed.attrs, **delta.attrs}
    return write_delta_file(model, ElementDelta(sorted(stale), new, attrs), base)


def _count(value: object) -> int | None:
    """A stored count (files written before it was kept have none)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelCorruptError("a recall segment's shape count does not decode")
    return value


def _by_decision(arrays: dict[str, Any]) -> tuple[Any, Any]:
    """A segment's per-decision element lists (both or neither; checked by shape,
    one element of each read)."""
    ptr, els = arrays.get("dec_ptr"), arrays.get("dec_els")
    if ptr is None and els is None:
        return None, None
    if (
        ptr is None
        or els is None
        or len(ptr) != len(arrays["decs"]) + 1
        or int(ptr[0]) != 0
        or int(ptr[-1]) != len(els)
    ):
        raise ModelCorruptError("a recall segment's decision lists do not agree")
    return ptr, els


# ---------------------------------------------------------------------- writing


def build_recall(model: Path, p: ProjectionView) -> dict[str, Any]:
    """Index a whole replayed projection; return the ``recall`` meta entry."""
    import numpy as np

    from kgai_tui.core.recall.index import element_part, segment_part

    elements = element_part(p)
    n = len(p.dec_id)
    segments = []
    if n:
        segments.append(
            write_segment_file(
                model, segment_part(p, np.arange(n, dtype=np.int64), elements.ids)
            )
        )
    return {
        "elements": write_element_file(model, elements),
        "segments": segments,
        "stale": [],
    }


def update_recall(
    model: Path,
    p: ProjectionView,
    recall: dict[str, Any],
    db: sqlite3.Connection,
    *,
    changed: Sequence[tuple[str, tuple[str, str, str]]],
    added: Sequence[str] | None,
    stale: Iterable[int],
    later: bool = False,
) -> tuple[dict[str, Any], ElementDelta | None]:
    """The ``recall`` entry and the element delta (``None``: as stored) after an
    update of ``p`` (an overlay of the model whose connection is ``db``).

    ``changed``: the elements whose kind, name or props changed or that were
    added, with their attributes now; ``added``: the elements added, in graph
    order (``None``: not known without walking the graph, which the update then
    did). Changed elements join the element delta, or, past
    :data:`~kgai_tui.core.model.recall_delta.ELEMENT_DELTA_MAX`, a new element
    file is written; a segment over the decisions appended since the last one once
    there are :data:`SEGMENT_EVERY`, the newest stored segments merged into it as
    :func:`~kgai_tui.core.recall.tiers.merged_tail` says.

    With ``later`` (a command-line read, which answers first), none of them
    is written here until :data:`LATER_SLACK` times as much is waiting:
    :mod:`~kgai_tui.core.model.tidy` writes them once the answer is out
    (:func:`recall_tidy_due`, :func:`tidy_recall`).
    """
    out = dict(recall)
    out["stale"] = sorted(set(recall["stale"]) | set(stale))
    covered = sum(int(e["count"]) for e in recall["segments"])
    n = len(p.dec_id)
    if not changed and n - covered < SEGMENT_EVERY:
        return out, None  # nothing to write (the usual record)
    ids: list[str] | None = None  # every element, in the order segments number them
    delta = stored_delta(db)
    if changed:
        grown = _grown(model, p, recall, delta, changed, added)
        stored = grown is not None
        if grown is not None:
            ids, delta = grown
            most = recall_delta.ELEMENT_DELTA_MAX * (LATER_SLACK if later else 1)
            if len(delta.stale) + len(delta.new) > most:
                filed = _spill(model, recall, delta, len(ids), any_size=later)
                stored = filed is not None
                if filed is not None:
                    out["delta_file"], delta = filed, ElementDelta()
        if not stored:
            from kgai_tui.core.recall.index import element_part

            elements = element_part(p)
            out["elements"] = write_element_file(model, elements)
            out.pop("delta_file", None)
            ids, delta = elements.ids, ElementDelta()
    if n - covered < SEGMENT_EVERY * (LATER_SLACK if later else 1):
        return out, delta
    import numpy as np

    from kgai_tui.core.recall.index import segment_part
    from kgai_tui.core.recall.tiers import merged_tail

    if ids is None:
        ids = [*_stored_ids(model, recall), *delta.new]
    segments = list(recall["segments"])
    counts = [int(s["count"]) for s in segments]
    merged = merged_tail([*counts, n - covered]) - 1  # stored segments merged in
    if merged:
        del segments[-merged:]
    start = covered - sum(counts[len(counts) - merged :])
    decs = np.arange(start, n, dtype=np.int64)
    p.prefetch(decs.tolist())
    segments.append(write_segment_file(model, segment_part(p, decs, ids)))
    out["segments"] = segments
    return out, delta


def recall_tidy_due(
    recall: dict[str, Any], delta: ElementDelta, elements: int, decisions: int
) -> bool:
    """Whether an update left the recall files for a tidy to bring back in
    shape: :data:`SEGMENT_EVERY` decisions or more past the segments, a model's
    ``delta`` over :data:`~kgai_tui.core.model.recall_delta.ELEMENT_DELTA_MAX`,
    or a delta file over 1/:data:`DELTA_FILE_SHARE` of the ``elements`` (its
    size is kept in its entry; a file written before that was never over it)."""
    covered = sum(int(e["count"]) for e in recall["segments"])
    return (
        decisions - covered >= SEGMENT_EVERY
        or _over_max(delta)
        or _over_share(recall, elements)
    )


def _over_max(delta: ElementDelta) -> bool:
    """Whether the model's delta holds more than it may (its file takes it)."""
    return len(delta.stale) + len(delta.new) > recall_delta.ELEMENT_DELTA_MAX


def _over_share(recall: dict[str, Any], elements: int) -> bool:
    """Whether the delta file holds more than its share of the ``elements`` (the
    element file is written again)."""
    filed = recall.get("delta_file")
    return filed is not None and int(filed.get("size", 0)) * DELTA_FILE_SHARE > elements


def tidy_recall(
    model: Path, p: ProjectionView, recall: dict[str, Any], db: sqlite3.Connection
) -> tuple[dict[str, Any], ElementDelta | None, bool]:
    """What :func:`update_recall` left with ``later``, done: the segment of the
    decisions past the last one, the model's delta spilled into the delta file,
    and the element file written again once that file passes its share. Returns
    the ``recall`` entry, the model's delta (``None``: as stored) and whether
    the element file was written (``p``'s graph loaded whole)."""
    from kgai_tui.core.recall.segments import element_part

    out, _ = update_recall(model, p, recall, db, changed=(), added=None, stale=())
    delta = stored_delta(db)
    kept: ElementDelta | None = None
    total = p.element_count()
    if _over_max(delta):
        out["delta_file"] = _spill(model, out, delta, total, any_size=True)
        kept = ElementDelta()
    if not _over_share(out, total):
        return out, kept, False
    out["elements"] = write_element_file(model, element_part(p))
    out.pop("delta_file")
    return out, ElementDelta(), True


def _grown(
    model: Path,
    p: ProjectionView,
    recall: dict[str, Any],
    delta: ElementDelta,
    changed: Sequence[tuple[str, tuple[str, str, str]]],
    added: Sequence[str] | None,
) -> tuple[list[str], ElementDelta] | None:
    """Every element id in order, and the element delta with ``changed`` in it;
    ``None`` when the element file must be written again instead (a changed
    element is neither stored nor added). ``added`` ``None``: the graph is
    loaded whole, and its order is the stored ids', then those added."""
    stored = _stored_ids(model, recall)
    if added is None:
        added = list(islice(p.graph.nodes, len(stored), None))
    at = {e: k for k, e in enumerate(stored)}
    new, attrs = list(delta.new), dict(delta.attrs)
    known = set(new)
    for eid in added:
        if eid not in at and eid not in known:
            new.append(eid)
            known.add(eid)
    stale = set(delta.stale)
    for eid, now in changed:
        k = at.get(eid)
        if k is not None:
            stale.add(k)
        elif eid not in known:
            return None
        attrs[eid] = now
    if len(stored) + len(new) != p.graph.number_of_nodes():
        raise ModelCorruptError("the recall elements and the graph differ")
    return [*stored, *new], ElementDelta(sorted(stale), new, attrs)
