"""Shard lines decode as Go's encoding/json would, and verify as the reference does."""

from __future__ import annotations

import orjson
import pytest
from builders import ShardWriter, decision, upsert

from kgai_tui.core.errors import LineError
from kgai_tui.core.gosem.gojson import go_float, marshal_indent
from kgai_tui.core.gosem.gotext import (
    go_fields,
    go_fold_key,
    go_lower,
    go_upper,
    parse_rfc3339,
)
from kgai_tui.core.wire.codec import compute_hash, decode_line, marshal_event


def _line() -> bytes:
    w = ShardWriter("i1")
    d = decision("Keep <drafts> & notes", [upsert("feature", "Invoice", paths="src/*")])
    return marshal_event(w.add(d, lamport=3, recorded_at="2026-02-01T10:00:00Z"))


def _obj() -> dict[str, object]:
    loaded = orjson.loads(_line())
    assert isinstance(loaded, dict)
    return loaded


def test_canonical_line_takes_fast_path() -> None:
    """A line written by a canonical writer verifies without re-parsing in Go mode."""
    decoded = decode_line(_line())
    assert decoded.canonical and decoded.hash_ok and decoded.decision_id_ok


def test_key_order_and_whitespace_do_not_matter() -> None:
    """Verification re-serialises the parsed struct: order and spacing are free."""
    obj = _obj()
    reordered = dict(reversed(list(obj.items())))
    raw = orjson.dumps(reordered, option=orjson.OPT_INDENT_2).replace(b"\n", b" ")
    decoded = decode_line(raw)
    assert not decoded.canonical
    assert decoded.hash_ok and decoded.decision_id_ok


def test_keys_match_case_insensitively_last_wins() -> None:
    """``HASH`` fills ``hash``; of two keys for one field the last wins."""
    good = _line()
    obj_hash = _obj()["hash"]
    raw = (
        b'{"hash":"sha256:bogus","HASH":"'
        + str(obj_hash).encode()
        + b'",'
        + good[1:].split(b",", 1)[1]
    )
    decoded = decode_line(raw)
    assert decoded.event.hash == obj_hash
    assert decoded.hash_ok


def test_kelvin_sign_folds_to_k() -> None:
    """Go folds U+212A KELVIN SIGN to ``K`` when matching keys."""
    assert go_fold_key("\u212aind") == go_fold_key("kind")
    raw = _line().replace(b'"kind":', '"\u212aind":'.encode())
    assert decode_line(raw).hash_ok


def test_unknown_keys_are_ignored() -> None:
    """An unknown key is dropped, so the event still verifies."""
    raw = _line()[:-1] + b',"extra":{"a":[1,2]}}'
    assert decode_line(raw).hash_ok


def test_nested_duplicate_decision_merges() -> None:
    """A second ``decision`` object decodes into what the first already filled."""
    good = _obj()
    dec = good["decision"]
    assert isinstance(dec, dict)
    first = {"id": dec["id"], "title": "placeholder"}
    rest = {k: v for k, v in dec.items() if k != "id"}
    head = orjson.dumps({k: v for k, v in good.items() if k != "decision"})[:-1]
    raw = (
        head
        + b',"decision":'
        + orjson.dumps(first)
        + b',"decision":'
        + orjson.dumps(rest)
        + b"}"
    )
    decoded = decode_line(raw)
    assert decoded.event.decision is not None
    assert decoded.event.decision.id == dec["id"]
    assert decoded.hash_ok


def test_null_keeps_scalars_and_clears_lists() -> None:
    """``null`` leaves a string as it was and clears a list."""
    raw = _line()[:-1] + b',"actor":null,"parents":null}'
    ev = decode_line(raw).event
    assert ev.actor == "alice"
    assert ev.parents is None


def test_empty_parents_differs_from_null() -> None:
    """``[]`` and ``null`` hash differently, so the distinction is kept."""
    w = ShardWriter("i1")
    ev = w.add(
        decision("t", [upsert("feature", "X")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    raw = marshal_event(ev).replace(b'"parents":null', b'"parents":[]')
    decoded = decode_line(raw)
    assert decoded.event.parents == ()
    assert not decoded.hash_ok
    assert compute_hash(decoded.event) != ev.hash


@pytest.mark.parametrize(
    "patch",
    [
        (b'"lamport":3', b'"lamport":"3"'),
        (b'"lamport":3', b'"lamport":3.0'),
        (b'"lamport":3', b'"lamport":3e0'),
        (b'"lamport":3', b'"lamport":99999999999999999999'),
        (b'"parents":null', b'"parents":"x"'),
        (b'"parents":null', b'"parents":[1]'),
        (b'"op":"assert"', b'"op":true'),
    ],
)
def test_wrong_types_make_the_line_unparsable(patch: tuple[bytes, bytes]) -> None:
    """A type mismatch anywhere makes Go refuse the whole line."""
    raw = _line().replace(*patch)
    with pytest.raises(LineError):
        decode_line(raw)


def test_decision_must_be_an_object() -> None:
    """``"decision": []`` is a type mismatch."""
    raw = _line().split(b',"decision":')[0] + b',"decision":[]}'
    with pytest.raises(LineError):
        decode_line(raw)


@pytest.mark.parametrize(
    "raw", [b"{", b"[]", b'"x"', b"NaN", b'{"lamport":NaN}', b"{} {}"]
)
def test_malformed_json_is_refused(raw: bytes) -> None:
    """Malformed JSON and non-object values are line errors."""
    with pytest.raises(LineError):
        decode_line(raw)


def test_top_level_null_is_an_empty_event() -> None:
    """Go decodes ``null`` into a zero Event, which then fails verification."""
    decoded = decode_line(b"null")
    assert decoded.event.hash == "" and not decoded.hash_ok


def test_invalid_utf8_becomes_one_replacement_per_byte() -> None:
    """Invalid bytes decode to U+FFFD each (Go's DecodeRune), never a crash."""
    raw = _line().replace(b"drafts", b"dr\xe2\x82fts")
    decoded = decode_line(raw)
    assert decoded.event.decision is not None
    assert "dr\ufffd\ufffdfts" in decoded.event.decision.title
    assert not decoded.hash_ok


def test_lone_surrogate_escape_becomes_replacement() -> None:
    """``\\ud800`` decodes to U+FFFD as in Go."""
    raw = _line().replace(b"drafts", b"dr\\ud800fts")
    decoded = decode_line(raw)
    assert decoded.event.decision is not None
    assert "dr\ufffdfts" in decoded.event.decision.title


def test_go_lowercase_differs_from_python() -> None:
    """Dotted capital I and final sigma follow Go's per-rune mapping."""
    assert go_lower("İ") == "i"
    assert go_lower("ΑΣ") == "ασ"
    assert go_upper("ß") == "ß"
    assert go_upper("straße") == "STRAßE"


def test_go_whitespace_set() -> None:
    """U+001C..U+001F are not white space in Go; NBSP and U+3000 are."""
    assert go_fields("a\x1cb") == ["a\x1cb"]
    assert go_fields("a\xa0b\u3000c") == ["a", "b", "c"]
    assert go_fields("a\u200bb") == ["a\u200bb"]


def test_rfc3339_parsing_matches_go() -> None:
    """Fractional seconds are dropped; a lower-case ``z`` is refused; offsets apply."""
    assert parse_rfc3339("2026-01-01T00:00:00.999Z") == parse_rfc3339(
        "2026-01-01T00:00:00Z"
    )
    assert parse_rfc3339("2026-01-01T00:00:00z") is None
    got = parse_rfc3339("2026-01-01T02:00:00+02:00")
    assert got == parse_rfc3339("2026-01-01T00:00:00Z")
    assert parse_rfc3339("2026-02-30T00:00:00Z") is None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (15.0, b"15"),
        (10.005, b"10.005"),
        (0.001, b"0.001"),
        (1e-7, b"1e-7"),
        (1e21, b"1e+21"),
        (1.5e-7, b"1.5e-7"),
        (0.5, b"0.5"),
        (123456789.25, b"123456789.25"),
        (1e20, b"100000000000000000000"),
        (-2.5, b"-2.5"),
    ],
)
def test_go_float_format(value: float, text: bytes) -> None:
    """Floats print as Go's encoding/json prints them."""
    assert go_float(value) == text


def test_marshal_indent_matches_go_layout() -> None:
    """MarshalIndent: two spaces, ``"k": v``, empty containers inline, newline at end."""
    assert marshal_indent({"a": [], "b": {}, "c": [1], "d": None}) == (
        b'{\n  "a": [],\n  "b": {},\n  "c": [\n    1\n  ],\n  "d": null\n}\n'
    )
