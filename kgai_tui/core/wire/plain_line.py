"""Verify a plain canonical line with one regular expression, without parsing it.

Almost every line a healthy store holds is "plain": Go's canonical bytes whose
strings are printable ASCII with nothing Go escapes (no quote, backslash, ``<``,
``>`` or ``&``). For such a line the canonical form is a grammar: Go's struct key
order with each omitted-when-empty key optional, every string written as is. One
compiled pattern checks that grammar in C; what it cannot express (lamport within
int64, props keys in order) is checked after, and both hashes are taken on slices
of the raw bytes. The verifier of a cold open spends about a third of the time it
spends in :func:`linecheck.check_line`, which parses the line and re-encodes it.

A line that is not plain, or fails a gate, is left to :func:`linecheck.check_line`,
so this module only ever answers "plain, canonical and both gates pass" or "ask
the exact path"; tests hold the two to the same verdict.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from typing import Final

# Printable ASCII but for what Go escapes in a string (& < > \) and DEL: a line of
# only these bytes (a fast translate) holds plain strings, so inside quotes the
# pattern need only stop at the next quote, which the regex engine does fastest.
_PLAIN_BYTES: Final = bytes(b for b in range(0x20, 0x7F) if b not in b"&<>\\")
#: Per byte value: whether it makes a line not plain (the newline ends lines).
NOT_PLAIN: Final = [b not in _PLAIN_BYTES and b != 0x0A for b in range(256)]
# Possessive forms throughout (``*+``, ``++``, ``?+``): the grammar never needs to
# backtrack into a string (it ends at the first quote) or to skip an optional key
# that matched (no later part can start with that key), so the engine is told not
# to keep the state for it; that makes the match about a third faster.
_RUN: Final = rb'[^"]*+'  # a string's bytes, possibly none
_BODY: Final = rb'[^"]++'  # an omitted-when-empty string's bytes: never none
_STR: Final = rb'"' + _RUN + rb'"'
_FULL: Final = rb'"' + _BODY + rb'"'
_LIST: Final = rb"\[" + _STR + rb"(?:," + _STR + rb")*+\]"
_PAIR: Final = _STR + rb":" + _STR


def _opt(part: bytes) -> bytes:
    """``part`` or nothing, possessively."""
    return rb"(?:" + part + rb")?+"


def _key(name: bytes, value: bytes) -> bytes:
    """An omitted-when-empty key: ``,"name":value`` or nothing."""
    return _opt(rb',"' + name + rb'":' + value)


_MUT: Final = (
    rb'\{"op":'
    + _STR
    + _key(b"element_id", _FULL)
    + _key(b"kind", _FULL)
    + _key(b"name", _FULL)
    # Group "more": set when any props map has a second key (checked for order).
    + _key(b"props", rb"\{" + _PAIR + rb"(?P<more>(?:," + _PAIR + rb")++)?+\}")
    + _key(b"from_id", _FULL)
    + _key(b"to_id", _FULL)
    + _key(b"link_kind", _FULL)
    + _key(b"key", _FULL)
    + _key(b"value", _FULL)
    + rb"\}"
)
_DECISION: Final = (
    rb'\{"id":"(?P<id>'
    + _RUN
    + rb')","title":"(?P<title>'
    + _RUN
    + rb')"'
    + _key(b"rationale", rb'"(?P<rationale>' + _BODY + rb')"')
    + _key(b"author", rb'"(?P<author>' + _BODY + rb')"')
    + _key(b"refs", rb'"(?P<refs>' + _BODY + rb')"')
    + _key(b"summary", rb'"(?P<summary>' + _BODY + rb')"')
    + _key(b"supersedes", _LIST)
    + _key(b"shapes", _LIST)
    + _key(b"targets", _LIST)
    # One copy of the mutation pattern (a named group may appear once): each item is
    # followed by a comma and the next item, or by the closing bracket.
    + rb',"mutations":(?P<muts>null|\[(?:'
    + _MUT
    + rb"(?:,(?=\{)|(?=\])))*+\])"
    + _key(b"provenance_only", b"true")
    + rb"\}"
)
PLAIN_LINE: Final = re.compile(
    rb'\{"hash":"sha256:(?P<hash>[0-9a-f]{64})","op":'
    + _STR
    + rb',"actor":'
    + _STR
    + rb',"install_id":"(?P<install>'
    + _RUN
    + rb')"'
    + rb',"lamport":(?P<lamport>0|-?[1-9][0-9]{0,18})'
    + rb',"recorded_at":"(?P<recorded>'
    + _RUN
    + rb')"'
    + rb',"parents":(?:null|\[\]|\["(?P<parent>'
    + _RUN
    + rb')"(?:,'
    + _STR
    + rb")*+\])"
    # An empty group marks a decision: reading a group copies its bytes.
    + rb',"decision":(?:null|(?P<decision>)'
    + _DECISION
    + rb")\}",
    re.ASCII,
)
_PROPS: Final = re.compile(rb'"props":\{(' + _PAIR + rb"(?:," + _PAIR + rb")*)\}")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_HASH_AT: Final = 80  # len('{"hash":"sha256:') + 64
_AUTHOR_NORM: dict[bytes, bytes] = {}
# The groups the checks read, fetched in one call (this runs a million times).
_CHECKED: Final = (
    "lamport",
    "more",
    "hash",
    "decision",
    "author",
    "title",
    "rationale",
    "id",
)
_fullmatch: Final = PLAIN_LINE.fullmatch
_sha256: Final = hashlib.sha256


def verify_plain(raw: bytes) -> tuple[int, re.Match[bytes]] | None:
    """``(lamport, match)`` of a plain line that passes every check.

    ``None`` means "not shown here": the line is not plain canonical, or one of its
    gates fails; :func:`linecheck.check_line` then gives the verdict. The claimed
    hash is ``raw[9:80]`` whenever this returns a value; the match's named groups
    hold the first parent and the decision's strings, exactly as decoded (a plain
    string is its own bytes).
    """
    if raw.translate(None, _PLAIN_BYTES):
        return None
    return verify_plain_at(raw, 0, len(raw))


def verify_plain_at(
    data: bytes, start: int, end: int
) -> tuple[int, re.Match[bytes]] | None:
    """:func:`verify_plain` of ``data[start:end]``, a line of plain bytes only.

    The scan of a shard checks the bytes of all its lines at once and matches each
    line in place, without a bytes object per line. The match's spans are offsets
    in ``data``.
    """
    m = _fullmatch(data, start, end)
    if m is None:
        return None
    lam, more, claimed, decision, author, title, rationale, dec_id = m.group(*_CHECKED)
    lamport = int(lam)
    if not _INT64_MIN <= lamport <= _INT64_MAX:
        return None
    if more is not None and not _props_in_order(data[start:end]):
        return None
    tail = data[start + _HASH_AT : end]
    if _sha256(b'{"hash":"' + tail).hexdigest() != claimed.decode():
        return None
    if decision is not None:
        first, stop = m.span("muts")
        author = author or b""
        norm_author = _AUTHOR_NORM.get(author)
        if norm_author is None:
            norm_author = b" ".join(author.lower().split())
            if len(_AUTHOR_NORM) < 4096:
                _AUTHOR_NORM[author] = norm_author
        head = b"\x00".join(
            (
                b" ".join(title.lower().split()),
                rationale or b"",
                norm_author,
                data[first:stop],
            )
        )
        if dec_id != b"d_" + _sha256(head).hexdigest()[:24].encode():
            return None
    return lamport, m


def _props_in_order(raw: bytes) -> bool:
    """Whether every props map's keys strictly increase, as Go writes a map."""
    for body in _PROPS.findall(raw):
        if b'","' not in body:
            continue
        # Strings hold no quote, so '","' only separates pairs and '":"' a pair.
        keys = [pair.split(b'":"', 1)[0] for pair in body[1:-1].split(b'","')]
        if any(a >= b for a, b in itertools.pairwise(keys)):
            return False
    return True
