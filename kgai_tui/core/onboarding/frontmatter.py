"""A small, strict subset of YAML for the front matter of MADR files.

MADR 3 and 4 open a record with::

    ---
    status: accepted
    date: 2024-03-01
    decision-makers: [Ana Ruiz, "Bo Chen"]
    consulted:
      - Cy Park
    ---

Supported: ``key: value`` lines at column 0 (plain, ``"double"`` or ``'single'``
quoted scalars, a trailing `` # comment``), one-line flow lists ``[a, "b, c"]``,
block lists of ``- item`` lines under a key with no value, blank lines and comment
lines. Everything else (nested mappings, block scalars, anchors, flow mappings,
duplicate keys) is refused with the line it is on, so a record that only a full YAML
parser would read is reported rather than half understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_KEY: Final = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_ .-]*?)\s*:(?:\s+(.*))?\Z")
_ITEM: Final = re.compile(r"\s*-(?:\s+(.*))?\Z")
_DQ_ESCAPES: Final = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t"}

Scalar = str
Value = str | list[str]


class FrontMatterError(ValueError):
    """A front matter line outside the supported subset."""

    def __init__(self, line: int, message: str) -> None:
        """Remember the 1-based line of the problem."""
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class Field:
    """One top-level key's value and the line it starts on."""

    value: Value
    line: int


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """The parsed front matter and where the body starts."""

    fields: dict[str, Field]
    body_start: int  # index of the first body line (0-based)


def _unquote_double(text: str, line: int) -> tuple[str, str]:
    """Read a ``"…"`` scalar at the start of ``text``; return it and the rest."""
    out: list[str] = []
    i = 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            return "".join(out), text[i + 1 :]
        if ch == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt not in _DQ_ESCAPES:
                raise FrontMatterError(line, f"unsupported escape \\{nxt} in a string")
            out.append(_DQ_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise FrontMatterError(line, "unterminated double-quoted string")


def _unquote_single(text: str, line: int) -> tuple[str, str]:
    """Read a ``'…'`` scalar (``''`` is a quote) at the start of ``text``."""
    out: list[str] = []
    i = 1
    while i < len(text):
        if text[i] == "'":
            if text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), text[i + 1 :]
        out.append(text[i])
        i += 1
    raise FrontMatterError(line, "unterminated single-quoted string")


def _strip_comment(rest: str, line: int) -> None:
    """Allow only white space or a comment after a quoted scalar."""
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise FrontMatterError(line, f"unexpected text after a quoted string: {rest!r}")


def _plain(text: str, line: int) -> str:
    """A plain scalar: up to a `` #`` comment, trimmed; special starts refused."""
    cut = re.split(r"\s#", text, maxsplit=1)[0].strip()
    if cut[:1] in ("&", "*", "!", "|", ">", "{", "%", "@", "`"):
        raise FrontMatterError(
            line, f"unsupported YAML construct {cut[:1]!r} (use a plain value)"
        )
    return "" if cut in ("~", "null", "Null", "NULL") else cut


def scalar(text: str, line: int) -> str:
    """Parse one scalar value (plain, double- or single-quoted).

    Raises:
        FrontMatterError: an unterminated quote, an unsupported construct.
    """
    text = text.strip()
    if text.startswith('"'):
        value, rest = _unquote_double(text, line)
        _strip_comment(rest, line)
        return value
    if text.startswith("'"):
        value, rest = _unquote_single(text, line)
        _strip_comment(rest, line)
        return value
    return _plain(text, line)


def _flow_list(text: str, line: int) -> list[str]:
    """Parse ``[a, "b", 'c']`` written on one line."""
    items: list[str] = []
    rest = text.strip()[1:]
    while True:
        rest = rest.lstrip()
        if not rest:
            raise FrontMatterError(line, "unterminated flow list (missing ']')")
        if rest.startswith("]"):
            _strip_comment(rest[1:], line)
            return items
        if rest[0] in "\"'":
            reader = _unquote_double if rest[0] == '"' else _unquote_single
            value, rest = reader(rest, line)
        else:
            end = min(
                (i for i in (rest.find(","), rest.find("]")) if i >= 0),
                default=-1,
            )
            if end < 0:
                raise FrontMatterError(line, "unterminated flow list (missing ']')")
            value, rest = _plain(rest[:end], line), rest[end:]
            if rest.startswith("[") or "[" in value:
                raise FrontMatterError(line, "nested lists are not supported")
        items.append(value)
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:]
        elif not rest.startswith("]"):
            raise FrontMatterError(line, "expected ',' or ']' in a flow list")


def _value(text: str, line: int) -> Value:
    text = text.strip()
    if text.startswith("["):
        return _flow_list(text, line)
    return scalar(text, line)


def parse_front_matter(lines: list[str]) -> FrontMatter | None:
    """Parse the front matter at the top of a file's lines, if it has one.

    Args:
        lines: the file's lines without line ends.

    Returns:
        ``None`` when the first line is not ``---``; otherwise the fields and the
        index of the first body line.

    Raises:
        FrontMatterError: the block is never closed, or a line is outside the subset.
    """
    if not lines or lines[0].rstrip() != "---":
        return None
    fields: dict[str, Field] = {}
    open_list: str | None = None
    bare: list[str] = []
    for index in range(1, len(lines)):
        raw = lines[index].rstrip()
        number = index + 1
        if raw in ("---", "..."):
            for key in bare:  # ``key:`` with no items is an empty value
                if fields[key].value == []:
                    fields[key] = Field("", fields[key].line)
            return FrontMatter(fields, index + 1)
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        item = _ITEM.match(raw)
        if item is not None and open_list is not None:
            current = fields[open_list].value
            assert isinstance(current, list)
            current.append(scalar(item.group(1) or "", number))
            continue
        if raw[0].isspace():
            raise FrontMatterError(
                number, "unexpected indentation (nested mappings are not supported)"
            )
        key_match = _KEY.match(raw)
        if key_match is None:
            raise FrontMatterError(number, f"expected 'key: value', got {raw!r}")
        key, text = key_match.group(1).lower(), key_match.group(2) or ""
        if key in fields:
            raise FrontMatterError(number, f"duplicate key {key!r}")
        if text.strip() and not text.strip().startswith("#"):
            fields[key] = Field(_value(text, number), number)
            open_list = None
        else:
            fields[key] = Field([], number)
            open_list = key
            bare.append(key)
    raise FrontMatterError(1, "front matter opened with '---' is never closed")
