"""The wire format: one shard line to an Event and back, with Go's exact semantics.

Reading takes a fast path when a line is already in canonical form (what every honest
writer produces): orjson parses it, re-encoding reproduces the raw bytes, and the hash
is checked on the raw bytes. Anything else (other key case, duplicate keys, invalid
UTF-8, extra white space, unknown keys) falls back to a decoder that follows Go's
``encoding/json`` rules (spec 2.8 and 14.7), then re-serialises to verify (spec 2.4).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final

import orjson

from kgai_tui.core.errors import LineError
from kgai_tui.core.gosem.gojson import marshal
from kgai_tui.core.gosem.gotext import go_fold_key
from kgai_tui.core.wire.ids import decision_id_from_parts
from kgai_tui.core.wire.model import Decision, Event, Mutation

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _go_replace(err: UnicodeError) -> tuple[str, int]:
    """Replace one invalid byte with U+FFFD, as Go's ``utf8.DecodeRune`` does."""
    assert isinstance(err, UnicodeDecodeError)
    return ("\ufffd", err.start + 1)


codecs.register_error("kgai-go-replace", _go_replace)


# --------------------------------------------------------------------------- encode


def mutation_obj(m: Mutation) -> dict[str, Any]:
    """Build a mutation in Go field order, omitting empty fields."""
    out: dict[str, Any] = {"op": m.op}
    if m.element_id:
        out["element_id"] = m.element_id
    if m.kind:
        out["kind"] = m.kind
    if m.name:
        out["name"] = m.name
    if m.props:
        out["props"] = dict(m.props)
    if m.from_id:
        out["from_id"] = m.from_id
    if m.to_id:
        out["to_id"] = m.to_id
    if m.link_kind:
        out["link_kind"] = m.link_kind
    if m.key:
        out["key"] = m.key
    if m.value:
        out["value"] = m.value
    return out


def mutations_obj(mutations: tuple[Mutation, ...] | None) -> list[Any] | None:
    """Build the mutation list, keeping nil (``None``) apart from empty."""
    if mutations is None:
        return None
    return [mutation_obj(m) for m in mutations]


def marshal_mutations(mutations: tuple[Mutation, ...] | None) -> bytes:
    """Return Go ``json.Marshal(mutations)``, the last part of a decision id."""
    return marshal(mutations_obj(mutations))


def decision_id(decision: Decision) -> str:
    """Return ``DecisionID(d)``: title, raw rationale, author and mutations only."""
    return decision_id_from_parts(
        decision.title,
        decision.rationale,
        decision.author,
        marshal_mutations(decision.mutations),
    )


def decision_obj(d: Decision) -> dict[str, Any]:
    """Build a decision in Go field order with Go's omitempty rules."""
    out: dict[str, Any] = {"id": d.id, "title": d.title}
    if d.rationale:
        out["rationale"] = d.rationale
    if d.author:
        out["author"] = d.author
    if d.refs:
        out["refs"] = d.refs
    if d.summary:
        out["summary"] = d.summary
    if d.supersedes:
        out["supersedes"] = list(d.supersedes)
    if d.shapes:
        out["shapes"] = list(d.shapes)
    if d.targets:
        out["targets"] = list(d.targets)
    out["mutations"] = mutations_obj(d.mutations)
    if d.provenance_only:
        out["provenance_only"] = True
    return out


def event_obj(ev: Event, *, hash_value: str | None = None) -> dict[str, Any]:
    """Build an event in Go field order; ``hash_value`` overrides the stored hash."""
    return {
        "hash": ev.hash if hash_value is None else hash_value,
        "op": ev.op,
        "actor": ev.actor,
        "install_id": ev.install_id,
        "lamport": ev.lamport,
        "recorded_at": ev.recorded_at,
        "parents": None if ev.parents is None else list(ev.parents),
        "decision": None if ev.decision is None else decision_obj(ev.decision),
    }


def marshal_event(ev: Event) -> bytes:
    """Return the canonical line for an event (no trailing newline)."""
    return marshal(event_obj(ev))


def compute_hash(ev: Event) -> str:
    """Return the content hash of an event: sha256 over its bytes with ``hash: ""``."""
    raw = marshal(event_obj(ev, hash_value=""))
    return "sha256:" + hashlib.sha256(raw).hexdigest()


# --------------------------------------------------------------------------- decode


@dataclass(frozen=True, slots=True)
class DecodedLine:
    """A parsed line with the two integrity gates already evaluated."""

    event: Event
    hash_ok: bool
    decision_id_ok: bool
    canonical: bool

    @property
    def event_hash(self) -> str:
        """The hash the line claims."""
        return self.event.hash

    @property
    def decision_id(self) -> str | None:
        """The decision id the line claims, or ``None`` without a decision."""
        return None if self.event.decision is None else self.event.decision.id


EVENT_KEYS: Final = (
    "hash",
    "op",
    "actor",
    "install_id",
    "lamport",
    "recorded_at",
    "parents",
    "decision",
)


def decode_line(raw: bytes) -> DecodedLine:
    """Parse one shard line (already stripped) and evaluate both gates.

    Raises:
        LineError: Go would not decode the line (malformed JSON, wrong types).
    """
    fast = _decode_fast(raw)
    if fast is not None:
        return fast
    event = _decode_go(raw)
    canonical_blank = marshal(event_obj(event, hash_value=""))
    hash_ok = event.hash == "sha256:" + hashlib.sha256(canonical_blank).hexdigest()
    return DecodedLine(event, hash_ok, _decision_id_ok(event.decision, None), False)


def _decision_id_ok(decision: Decision | None, mutations_json: bytes | None) -> bool:
    if decision is None:
        return True
    if mutations_json is None:
        mutations_json = marshal_mutations(decision.mutations)
    expected = decision_id_from_parts(
        decision.title, decision.rationale, decision.author, mutations_json
    )
    return expected == decision.id


_MUT_MARK: Final = b',"mutations":'
_PROV_TAIL: Final = b',"provenance_only":true}}'


def _decode_fast(raw: bytes) -> DecodedLine | None:
    """Decode a canonical line with orjson; ``None`` sends it to the Go path."""
    if not raw.startswith(b'{"hash":"'):
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict or tuple(obj) != EVENT_KEYS:
        return None
    try:
        event = _event_from_canonical_dict(obj)
        if marshal(event_obj(event)) != raw:
            return None
    except (TypeError, ValueError, KeyError):
        return None
    end_of_hash = 9 + len(event.hash)
    blanked = b'{"hash":"' + raw[end_of_hash:]
    hash_ok = event.hash == "sha256:" + hashlib.sha256(blanked).hexdigest()
    mutations_json: bytes | None = None
    if event.decision is not None:
        start = raw.find(_MUT_MARK)
        stop = len(raw) - (len(_PROV_TAIL) if event.decision.provenance_only else 2)
        mutations_json = raw[start + len(_MUT_MARK) : stop]
    return DecodedLine(
        event, hash_ok, _decision_id_ok(event.decision, mutations_json), True
    )


def _str(v: Any) -> str:
    if type(v) is not str:
        raise TypeError("not a string")
    return v


def _str_tuple(v: Any) -> tuple[str, ...]:
    if type(v) is not list:
        raise TypeError("not a list")
    for item in v:
        if type(item) is not str:
            raise TypeError("not a string")
    return tuple(v)


def event_from_obj(obj: dict[str, Any]) -> Event:
    """Build an Event from a verified canonical dict (what the open path keeps)."""
    return _event_from_canonical_dict(obj)


def _event_from_canonical_dict(obj: dict[str, Any]) -> Event:
    lamport = obj["lamport"]
    if type(lamport) is not int or not _INT64_MIN <= lamport <= _INT64_MAX:
        raise TypeError("lamport")  # orjson reads up to 2**64-1; Go's int64 does not
    parents = obj["parents"]
    dec = obj["decision"]
    return Event(
        hash=_str(obj["hash"]),
        op=_str(obj["op"]),
        actor=_str(obj["actor"]),
        install_id=_str(obj["install_id"]),
        lamport=lamport,
        recorded_at=_str(obj["recorded_at"]),
        parents=None if parents is None else _str_tuple(parents),
        decision=None if dec is None else _decision_from_canonical_dict(dec),
    )


def _decision_from_canonical_dict(d: Any) -> Decision:
    if type(d) is not dict:
        raise TypeError("decision")
    muts = d["mutations"]
    prov = d.get("provenance_only", False)
    if type(prov) is not bool:
        raise TypeError("provenance_only")
    return Decision(
        id=_str(d["id"]),
        title=_str(d["title"]),
        rationale=_str(d.get("rationale", "")),
        author=_str(d.get("author", "")),
        refs=_str(d.get("refs", "")),
        summary=_str(d.get("summary", "")),
        supersedes=_str_tuple(d.get("supersedes", [])),
        shapes=_str_tuple(d.get("shapes", [])),
        targets=_str_tuple(d.get("targets", [])),
        mutations=None if muts is None else _mutations_from_canonical(muts),
        provenance_only=prov,
    )


def _mutations_from_canonical(muts: Any) -> tuple[Mutation, ...]:
    if type(muts) is not list:
        raise TypeError("mutations")
    out = []
    for m in muts:
        if type(m) is not dict:
            raise TypeError("mutation")
        props = m.get("props")
        if props is None:
            pairs: tuple[tuple[str, str], ...] = ()
        else:
            if type(props) is not dict:
                raise TypeError("props")
            pairs = tuple(sorted((_str(k), _str(v)) for k, v in props.items()))
        out.append(
            Mutation(
                op=_str(m["op"]),
                element_id=_str(m.get("element_id", "")),
                kind=_str(m.get("kind", "")),
                name=_str(m.get("name", "")),
                props=pairs,
                from_id=_str(m.get("from_id", "")),
                to_id=_str(m.get("to_id", "")),
                link_kind=_str(m.get("link_kind", "")),
                key=_str(m.get("key", "")),
                value=_str(m.get("value", "")),
            )
        )
    return tuple(out)


# ---------------------------------------------------------------- Go-semantics decoding


class _Obj(list[tuple[str, Any]]):
    """A JSON object as its ordered key/value pairs (duplicates kept)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid literal {name}")


def _go_json_loads(raw: bytes) -> Any:
    """Parse JSON as Go would see it: invalid UTF-8 bytes become U+FFFD each."""
    text = raw.decode("utf-8", errors="kgai-go-replace")
    try:
        return json.loads(text, object_pairs_hook=_Obj, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise LineError("malformed JSON") from exc


def _go_str(v: Any) -> str:
    return _SURROGATE.sub("\ufffd", v) if _SURROGATE.search(v) else v


# Field tables: JSON name -> kind. Go matches exact names first, then folded names.
_EVENT_FIELDS: Final = {
    "hash": "str",
    "op": "str",
    "actor": "str",
    "install_id": "str",
    "lamport": "int",
    "recorded_at": "str",
    "parents": "strlist",
    "decision": "decision",
}
_DECISION_FIELDS: Final = {
    "id": "str",
    "title": "str",
    "rationale": "str",
    "author": "str",
    "refs": "str",
    "summary": "str",
    "supersedes": "strlist",
    "shapes": "strlist",
    "targets": "strlist",
    "mutations": "mutlist",
    "provenance_only": "bool",
}
_MUTATION_FIELDS: Final = {
    "op": "str",
    "element_id": "str",
    "kind": "str",
    "name": "str",
    "props": "props",
    "from_id": "str",
    "to_id": "str",
    "link_kind": "str",
    "key": "str",
    "value": "str",
}


def _folded(fields: dict[str, str]) -> dict[str, str]:
    return {go_fold_key(name): name for name in fields}


_EVENT_FOLD: Final = _folded(_EVENT_FIELDS)
_DECISION_FOLD: Final = _folded(_DECISION_FIELDS)
_MUTATION_FOLD: Final = _folded(_MUTATION_FIELDS)


def _zero(fields: dict[str, str]) -> dict[str, Any]:
    zero: dict[str, Any] = {}
    for name, kind in fields.items():
        zero[name] = {"str": "", "int": 0, "bool": False}.get(kind)
    return zero


def _decode_struct(
    obj: _Obj, state: dict[str, Any], fields: dict[str, str], fold: dict[str, str]
) -> None:
    for key, val in obj:
        name = key if key in fields else fold.get(go_fold_key(key))
        if name is None:
            continue
        kind = fields[name]
        if val is None:
            if kind in ("strlist", "mutlist", "props", "decision"):
                state[name] = None
            continue
        if kind == "str":
            if type(val) is not str:
                raise LineError(f"wrong type for {name!r}")
            state[name] = _go_str(val)
        elif kind == "int":
            if type(val) is not int or not _INT64_MIN <= val <= _INT64_MAX:
                raise LineError(f"wrong type for {name!r}")
            state[name] = val
        elif kind == "bool":
            if type(val) is not bool:
                raise LineError(f"wrong type for {name!r}")
            state[name] = val
        elif kind == "strlist":
            state[name] = _decode_str_list(val, state[name], name)
        elif kind == "mutlist":
            state[name] = _decode_mut_list(val, state[name])
        elif kind == "props":
            state[name] = _decode_props(val, state[name])
        elif kind == "decision":
            if not isinstance(val, _Obj):
                raise LineError("wrong type for 'decision'")
            sub = state[name] if state[name] is not None else _zero(_DECISION_FIELDS)
            _decode_struct(val, sub, _DECISION_FIELDS, _DECISION_FOLD)
            state[name] = sub


def _decode_str_list(val: Any, current: list[str] | None, name: str) -> list[str]:
    if type(val) is not list:
        raise LineError(f"wrong type for {name!r}")
    out = list(current or [])
    for i, item in enumerate(val):
        if i >= len(out):
            out.append("")
        if item is None:
            continue
        if type(item) is not str:
            raise LineError(f"wrong type in {name!r}")
        out[i] = _go_str(item)
    return out[: len(val)]


def _decode_mut_list(val: Any, current: list[dict[str, Any]] | None) -> list[Any]:
    if type(val) is not list:
        raise LineError("wrong type for 'mutations'")
    out = list(current or [])
    for i, item in enumerate(val):
        if i >= len(out):
            out.append(_zero(_MUTATION_FIELDS))
        if item is None:
            continue
        if not isinstance(item, _Obj):
            raise LineError("wrong type in 'mutations'")
        _decode_struct(item, out[i], _MUTATION_FIELDS, _MUTATION_FOLD)
    return out[: len(val)]


def _decode_props(val: Any, current: dict[str, str] | None) -> dict[str, str]:
    if not isinstance(val, _Obj):
        raise LineError("wrong type for 'props'")
    out = dict(current) if current is not None else {}
    for key, item in val:
        if item is None:
            out[_go_str(key)] = ""
        elif type(item) is str:
            out[_go_str(key)] = _go_str(item)
        else:
            raise LineError("wrong type in 'props'")
    return out


def _decode_go(raw: bytes) -> Event:
    """Decode a line exactly as Go's ``json.Unmarshal`` into the Event struct would."""
    value = _go_json_loads(raw)
    state = _zero(_EVENT_FIELDS)
    if value is None:
        pass
    elif isinstance(value, _Obj):
        _decode_struct(value, state, _EVENT_FIELDS, _EVENT_FOLD)
    else:
        raise LineError("not a JSON object")
    dec = state["decision"]
    parents = state["parents"]
    return Event(
        hash=state["hash"],
        op=state["op"],
        actor=state["actor"],
        install_id=state["install_id"],
        lamport=state["lamport"],
        recorded_at=state["recorded_at"],
        parents=None if parents is None else tuple(parents),
        decision=None if dec is None else _decision_from_state(dec),
    )


def _decision_from_state(s: dict[str, Any]) -> Decision:
    muts = s["mutations"]
    return Decision(
        id=s["id"],
        title=s["title"],
        rationale=s["rationale"],
        author=s["author"],
        refs=s["refs"],
        summary=s["summary"],
        supersedes=tuple(s["supersedes"] or ()),
        shapes=tuple(s["shapes"] or ()),
        targets=tuple(s["targets"] or ()),
        mutations=None
        if muts is None
        else tuple(
            Mutation(
                op=m["op"],
                element_id=m["element_id"],
                kind=m["kind"],
                name=m["name"],
                props=tuple(sorted((m["props"] or {}).items())),
                from_id=m["from_id"],
                to_id=m["to_id"],
                link_kind=m["link_kind"],
                key=m["key"],
                value=m["value"],
            )
            for m in muts
        ),
        provenance_only=s["provenance_only"],
    )
