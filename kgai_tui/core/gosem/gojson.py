"""Go ``encoding/json`` output, byte for byte (spec 2.7).

orjson already escapes exactly as Go does except for Go's HTML-safe escapes (``<``,
``>``, ``&``) and U+2028/U+2029. None of those bytes can appear in JSON syntax outside a
string, so a plain byte replacement after orjson gives Go's bytes at C speed. Key order
is the caller's: build dicts in Go struct order, or sorted for Go maps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from itertools import chain
from typing import Any, Final

import orjson

from kgai_tui.core.gosem.gotext import go_string

_FIXUPS: Final = (
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    (b"&", b"\\u0026"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)
_FIX_PROBE: Final = (b"<", b">", b"&", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def go_escape_fixup(raw: bytes) -> bytes:
    """Apply Go's HTML-safe and line-separator escapes to orjson output.

    The separators are multi-byte, so they are looked for only in output that is
    not all ASCII (a check at memory speed; searching 300 MB of export for them
    twice took most of a second)."""
    probes = _FIX_PROBE if not raw.isascii() else _FIX_PROBE[:3]
    for probe, (old, new) in zip(probes, _FIXUPS, strict=False):
        if probe in raw:
            raw = raw.replace(old, new)
    return raw


def go_float(value: float) -> bytes:
    """Format a float64 as Go's encoding/json does (``15``, ``1e-7``, ``1e+21``)."""
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"unsupported float value: {value!r}")
    if value == 0:
        return b"-0" if str(value).startswith("-") else b"0"
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, _, exp = repr(value).partition("e")
        if not exp:  # repr chose positional form; force exponent form
            mantissa, _, exp = f"{value:e}".partition("e")
            mantissa = repr(float(mantissa))
        if mantissa.endswith(".0"):
            mantissa = mantissa[:-2]
        sign = "-" if exp.startswith("-") else "+"
        digits = exp.lstrip("+-").lstrip("0") or "0"
        if len(digits) < 2 and sign == "+":
            digits = digits.rjust(2, "0")
        return f"{mantissa}e{sign}{digits}".encode()
    from decimal import Decimal  # rare (a float in a value): not paid at start-up

    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.encode()


def go_float_fragment(value: float) -> orjson.Fragment:
    """Wrap a float so that orjson writes it in Go's format."""
    return orjson.Fragment(go_float(value))


def with_go_floats(value: Any) -> Any:
    """Return a copy of a JSON-like value whose floats will print in Go's format."""
    if type(value) is float:
        return go_float_fragment(value)
    if type(value) is dict:
        return {k: with_go_floats(v) for k, v in value.items()}
    if type(value) is list:
        return [with_go_floats(v) for v in value]
    return value


def _without_surrogates(value: Any) -> Any:
    """Replace lone surrogates with U+FFFD everywhere: Go writes invalid UTF-8 so."""
    if type(value) is str:
        return go_string(value)
    if type(value) is dict:
        return {
            _without_surrogates(k): _without_surrogates(v) for k, v in value.items()
        }
    if type(value) in (list, tuple):
        return [_without_surrogates(v) for v in value]
    return value


def _dumps(value: Any, option: int | None = None) -> bytes:
    try:
        return orjson.dumps(value, option=option)
    except TypeError:
        # orjson refuses lone surrogates (e.g. an undecodable file name); retry
        # once with them replaced, which is what Go's encoder would print.
        return orjson.dumps(_without_surrogates(value), option=option)


def marshal(value: Any, option: int | None = None) -> bytes:
    """Return Go ``json.Marshal`` bytes for dicts, lists and scalars (orjson's
    ``option``, such as ``OPT_INDENT_2``, applied first)."""
    return go_escape_fixup(_dumps(value, option))


def marshal_indent(value: Any) -> bytes:
    """Return Go ``json.MarshalIndent(v, "", "  ")`` bytes plus the CLI's newline."""
    return go_escape_fixup(_dumps(value, orjson.OPT_INDENT_2)) + b"\n"


#: Items of a long list encoded per piece by :func:`marshal_indent_chunks`.
CHUNK_ITEMS: Final = 2048


class Blocks:
    """A JSON array too long to hold: its length known up front, its items made a
    block at a time as they are encoded (a week's ``diff`` at a million decisions
    is 568k rows, 439 MB of JSON).

    :func:`marshal_indent_chunks` writes it as the list it stands for, byte for
    byte; :func:`plain` turns it into that list for a reader that holds the answer.
    """

    __slots__ = ("_make", "_size")

    def __init__(self, size: int, make: Callable[[], Iterator[list[Any]]]) -> None:
        """``size`` items, made by ``make()`` in order, a list per block (the
        blocks' lengths add up to ``size``)."""
        self._size = size
        self._make = make

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def blocks(self) -> Iterator[list[Any]]:
        """The items, a block at a time (made again on every call)."""
        made = 0
        for block in self._make():
            made += len(block)
            yield block
        if made != self._size:
            raise ValueError(f"made {made} items of {self._size}")

    def __iter__(self) -> Iterator[Any]:
        return chain.from_iterable(self.blocks())


def plain(value: Mapping[str, Any]) -> dict[str, Any]:
    """An object with each :class:`Blocks` value made into its list."""
    return {k: list(v) if isinstance(v, Blocks) else v for k, v in value.items()}


def marshal_indent_chunks(value: Mapping[str, Any]) -> Iterator[bytes]:
    """:func:`marshal_indent` of an object, in pieces that join to the same bytes:
    each list value longer than :data:`CHUNK_ITEMS` a slice of items at a time.

    An answer of a million rows (a wide ``diff``) is then never held twice more as
    bytes. A piece ends between items, where no escape or UTF-8 character spans it.
    """
    if not value:
        yield marshal_indent(value)
        return
    yield b"{\n"
    items = list(value.items())
    indent = orjson.OPT_INDENT_2
    for n, (key, item) in enumerate(items):
        end = b"\n" if n == len(items) - 1 else b",\n"
        head = b"  " + _dumps(key) + b": "
        if isinstance(item, Blocks):
            yield from _blocks_indented(head, item, end)
            continue
        if type(item) is not list or len(item) <= CHUNK_ITEMS:
            nested = _dumps(item, indent).replace(b"\n", b"\n  ")
            yield go_escape_fixup(head + nested + end)
            continue
        yield go_escape_fixup(head) + b"[\n"
        for at in range(0, len(item), CHUNK_ITEMS):
            part = _dumps(item[at : at + CHUNK_ITEMS], indent)
            rows = b"  " + part[2:-2].replace(b"\n", b"\n  ")  # "[\n" ... "\n]"
            more = at + CHUNK_ITEMS < len(item)
            yield go_escape_fixup(rows) + (b",\n" if more else b"\n")
        yield b"  ]" + end
    yield b"}\n"


def _blocks_indented(head: bytes, item: Blocks, end: bytes) -> Iterator[bytes]:
    """A :class:`Blocks` value of :func:`marshal_indent_chunks`: what a list of its
    items gives there, a block at a time."""
    if not item:
        yield go_escape_fixup(head) + b"[]" + end
        return
    yield go_escape_fixup(head) + b"[\n"
    sep = b""
    for block in item.blocks():
        if block:
            part = _dumps(block, orjson.OPT_INDENT_2)
            rows = b"  " + part[2:-2].replace(b"\n", b"\n  ")  # "[\n" ... "\n]"
            yield sep + go_escape_fixup(rows)
            sep = b",\n"
    yield b"\n  ]" + end
