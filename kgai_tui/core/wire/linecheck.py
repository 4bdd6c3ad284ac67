"""Verify a shard line on its raw bytes, without building Event objects (spec 2.4-2.8).

Opening a million-line store spends most of its time here, so the common case (a
line already in Go's canonical form) is checked on the orjson dict itself: the key
order and omitempty shape are compared against Go's struct order, the dict is
re-encoded once to prove the bytes are canonical, and both hashes are taken on slices
of the raw line. Anything else goes through :func:`codec.decode_line`, which follows
Go's decoder exactly; its event is turned into the same canonical dict shape, so the
replay has one input type.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final, NamedTuple

import orjson

from kgai_tui.core.gosem.gojson import marshal
from kgai_tui.core.gosem.gotext import go_string, normalize
from kgai_tui.core.wire.codec import EVENT_KEYS, decode_line, event_obj

_DEC_ORDER: Final = (
    "id",
    "title",
    "rationale",
    "author",
    "refs",
    "summary",
    "supersedes",
    "shapes",
    "targets",
    "mutations",
    "provenance_only",
)
_MUT_ORDER: Final = (
    "op",
    "element_id",
    "kind",
    "name",
    "props",
    "from_id",
    "to_id",
    "link_kind",
    "key",
    "value",
)
_MUT_MARK: Final = b',"mutations":'
_PROV_TAIL: Final = b',"provenance_only":true}}'
_INT64: Final = (-(2**63), 2**63 - 1)
_DEC_KIND: Final = {
    "id": 0,
    "title": 0,
    "rationale": 1,
    "author": 1,
    "refs": 1,
    "summary": 1,
    "supersedes": 2,
    "shapes": 2,
    "targets": 2,
    "mutations": 3,
    "provenance_only": 4,
}


def _subsequences(
    order: tuple[str, ...], required: frozenset[str]
) -> list[tuple[str, ...]]:
    """Every key tuple Go can write: the struct order with optional keys left out."""
    out: list[tuple[str, ...]] = []
    optional = [k for k in order if k not in required]
    for mask in range(1 << len(optional)):
        dropped = {k for i, k in enumerate(optional) if mask >> i & 1}
        out.append(tuple(k for k in order if k not in dropped))
    return out


# Key tuple -> the kind of each value in it (decisions) / whether it has props.
_DEC_SHAPES: Final = {
    keys: tuple(_DEC_KIND[k] for k in keys)
    for keys in _subsequences(_DEC_ORDER, frozenset(("id", "title", "mutations")))
}
_MUT_SHAPES: Final = {
    keys: "props" in keys for keys in _subsequences(_MUT_ORDER, frozenset(("op",)))
}
_STR: Final = {str}
_NONE: Final = type(None)
# Every type tuple an event's top level can have (parents and decision may be null).
_EVENT_TYPES: Final = frozenset(
    (str, str, str, str, int, str, parents, decision)
    for parents in (_NONE, list)
    for decision in (_NONE, dict)
)
# Decision key tuple -> the type tuples its values may have (mutations may be null).
_KIND_TYPE: Final = {0: str, 1: str, 2: list, 4: bool}
_DEC_TYPES: Final = {
    keys: frozenset(
        tuple(muts if kind == 3 else _KIND_TYPE[kind] for kind in kinds)
        for muts in (_NONE, list)
    )
    for keys, kinds in _DEC_SHAPES.items()
}
_DEC_LIST_KEYS: Final = {
    keys: tuple(k for k, kind in zip(keys, kinds, strict=True) if kind == 2)
    for keys, kinds in _DEC_SHAPES.items()
}
_MUT_TYPES: Final = {
    keys: tuple(dict if k == "props" else str for k in keys) for keys in _MUT_SHAPES
}
_MUT_WITH_PROPS: Final = frozenset(k for k, has in _MUT_SHAPES.items() if has)


class CheckedLine(NamedTuple):
    """One line's canonical dict and its two gates (a tuple: a million are made)."""

    obj: dict[str, Any]
    hash_ok: bool
    decision_id_ok: bool
    canonical: bool

    @property
    def event_hash(self) -> str:
        """The hash the line claims."""
        return str(self.obj["hash"])

    @property
    def decision_id(self) -> str | None:
        """The decision id the line claims, or ``None`` without a decision."""
        dec = self.obj["decision"]
        return None if dec is None else str(dec["id"])


class _NotCanonical(Exception):
    """The line is not in Go's canonical shape; the exact decoder takes it."""


_AUTHOR_NORM: dict[str, str] = {}


def check_line(raw: bytes) -> CheckedLine:
    """Decode and verify one stripped, non-empty line.

    Raises:
        LineError: Go would not decode the line at all.
    """
    try:
        return _check_canonical(raw)
    except (_NotCanonical, orjson.JSONDecodeError):
        pass
    decoded = decode_line(raw)
    return CheckedLine(
        event_obj(decoded.event), decoded.hash_ok, decoded.decision_id_ok, False
    )


def _check_canonical(raw: bytes) -> CheckedLine:
    if not raw.startswith(b'{"hash":"'):
        raise _NotCanonical
    obj = orjson.loads(raw)
    if type(obj) is not dict or tuple(obj) != EVENT_KEYS:
        raise _NotCanonical
    if tuple(map(type, obj.values())) not in _EVENT_TYPES:
        raise _NotCanonical
    lamport = obj["lamport"]
    parents = obj["parents"]
    if not _INT64[0] <= lamport <= _INT64[1] or (parents and not _all_str(parents)):
        raise _NotCanonical
    # Go escapes <, >, & and U+2028/9; orjson does not. Without them the two agree.
    plain = raw.isascii() and b"<" not in raw and b">" not in raw and b"&" not in raw
    # No escape at all: no control character, no lone surrogate in any string.
    simple = plain and b"\\" not in raw
    dec = obj["decision"]
    if dec is not None:
        # An empty value shows as :"" in canonical bytes; only the exact walk
        # tells an omitted-when-empty field from one that may be empty.
        if simple and b':""' not in raw:
            _check_decision_quick(dec)
        else:
            _check_decision(dec)
    if not (plain and orjson.dumps(obj) == raw) and marshal(obj) != raw:
        raise _NotCanonical
    blanked = b'{"hash":"' + raw[raw.index(b'","op":', 9) :]
    hash_ok = obj["hash"] == "sha256:" + hashlib.sha256(blanked).hexdigest()
    dec_ok = True
    if dec is not None:
        start = raw.find(_MUT_MARK) + len(_MUT_MARK)
        stop = len(raw) - (len(_PROV_TAIL) if "provenance_only" in dec else 2)
        author = dec.get("author", "")
        norm_author = _AUTHOR_NORM.get(author)
        if norm_author is None:
            norm_author = normalize(author)
            if len(_AUTHOR_NORM) < 4096:
                _AUTHOR_NORM[author] = norm_author
        title = dec["title"]
        rationale = dec.get("rationale", "")
        if simple:  # ASCII without escapes: normalize's fast path, no surrogates
            head = " ".join(title.lower().split()) + "\x00" + rationale
        else:
            head = normalize(title) + "\x00" + go_string(rationale)
        head += "\x00" + norm_author + "\x00"
        digest = hashlib.sha256(head.encode() + raw[start:stop]).hexdigest()
        dec_ok = dec["id"] == "d_" + digest[:24]
    return CheckedLine(obj, hash_ok, dec_ok, True)


def _all_str(values: list[Any]) -> bool:
    return set(map(type, values)) == _STR


def _check_decision_quick(dec: Any) -> None:
    """:func:`_check_decision` for a line that holds no empty string anywhere.

    Then no omitted-when-empty string can be empty, so the shape is the key tuple and
    the type of every value, compared as tuples at C speed.
    """
    if type(dec) is not dict:
        raise _NotCanonical
    keys = tuple(dec)
    shape = _DEC_TYPES.get(keys)
    if shape is None or tuple(map(type, dec.values())) not in shape:
        raise _NotCanonical
    for key in _DEC_LIST_KEYS[keys]:
        if not _all_str(dec[key]):  # present lists are non-empty lists of strings
            raise _NotCanonical
    if dec.get("provenance_only", True) is not True:
        raise _NotCanonical
    muts = dec["mutations"]
    if muts:
        for m in muts:
            if type(m) is not dict:
                raise _NotCanonical
            mkeys = tuple(m)
            if _MUT_TYPES.get(mkeys) != tuple(map(type, m.values())):
                raise _NotCanonical
            if mkeys in _MUT_WITH_PROPS:
                _check_props(m["props"])


def _check_decision(dec: Any) -> None:
    """Go's omitempty shape and types of a decision, or :class:`_NotCanonical`."""
    if type(dec) is not dict:
        raise _NotCanonical
    kinds = _DEC_SHAPES.get(tuple(dec))
    if kinds is None:
        raise _NotCanonical
    for value, kind in zip(dec.values(), kinds, strict=True):
        if kind == 0:  # id, title: any string
            if type(value) is not str:
                raise _NotCanonical
        elif kind == 1:  # omitempty strings
            if type(value) is not str or not value:
                raise _NotCanonical
        elif kind == 2:  # omitempty string lists
            if type(value) is not list or not value or set(map(type, value)) != _STR:
                raise _NotCanonical
        elif kind == 3:  # mutations
            if value is not None:
                if type(value) is not list:
                    raise _NotCanonical
                for m in value:
                    _check_mutation(m)
        elif value is not True:  # provenance_only
            raise _NotCanonical


def _check_props(props: Any) -> None:
    """A mutation's props: a non-empty map of strings, keys in Go's (sorted) order."""
    if type(props) is not dict or not props or not _all_str(list(props.values())):
        raise _NotCanonical
    if len(props) > 1:
        names = list(props)
        if names != sorted(names):
            raise _NotCanonical


def _check_mutation(m: Any) -> None:
    if type(m) is not dict:
        raise _NotCanonical
    has_props = _MUT_SHAPES.get(tuple(m))
    if has_props is None:
        raise _NotCanonical
    values = list(m.values())
    if type(values[0]) is not str:  # op may be empty
        raise _NotCanonical
    if has_props:
        props = m["props"]
        _check_props(props)
        values = [v for v in values[1:] if v is not props]
    else:
        values = values[1:]
    if values and (set(map(type, values)) != _STR or "" in values):
        raise _NotCanonical
