"""What a query may not do, checked on its text before it runs.

Three checks, then the database itself (opened read-only) as the last word:

* **kg's check, byte for byte** (spec 6.10, ``reads.go``): with string literals
  replaced by ``''``, a whole word ``copy|load|export|import|attach|detach|install``
  (any case) refuses the query with kg's own message. Comments are not removed
  first, as kg does not: such a word in a comment is refused too.
* **Sizes** the engine cannot parse without overflowing its stack (a hostile query
  would kill the process, an MCP server with it): at most :data:`MAX_LENGTH`
  characters and :data:`MAX_DEPTH` nested brackets; and text that is not UTF-8
  (a command line's undecodable bytes).
* **Writes**: a clause that changes the graph (``CREATE``, ``MERGE``, ``SET``,
  ``DELETE``, ``REMOVE``, ``DROP``, ``ALTER``, a transaction statement) is refused
  in one line naming it. Here string literals, backquoted names and comments are
  removed first, so ``RETURN e.name AS created`` or ``// set of elements`` pass.
  The read-only database refuses what this check would miss.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_DEPTH", "MAX_LENGTH", "QueryRefused", "has_order_by", "refusal"]

#: The longest query run (characters). The engine's parser and binder recurse: a sum
#: of 10,000 terms (20,000 characters) overflows the stack and kills the process
#: (measured with ladybug 0.22); 5,000 terms run.
MAX_LENGTH: Final = 10_000
#: The deepest nesting of brackets run: lists nested 800 deep kill the process,
#: 600 run.
MAX_DEPTH: Final = 200

_FORBIDDEN: Final = re.compile(
    r"(?i)(^|[^a-zA-Z0-9_])(copy|load|export|import|attach|detach|install)"
    r"([^a-zA-Z0-9_]|$)"
)
_STRINGS: Final = re.compile(r"'[^']*'|\"[^\"]*\"")
_WRITES: Final = re.compile(
    r"(?i)(?<![a-zA-Z0-9_.$])(create|merge|set|delete|remove|drop|alter|begin|commit"
    r"|rollback|checkpoint)(?![a-zA-Z0-9_])"
)
# Strings (with backslash escapes), backquoted names, then comments.
_NOT_CODE: Final = re.compile(
    r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|//[^\n]*|/\*.*?\*/", re.S
)
_ORDER_BY: Final = re.compile(r"(?i)(?<![a-zA-Z0-9_])order\s+by(?![a-zA-Z0-9_])")


class QueryRefused(ValueError):
    """A query the guard refuses; its message is the one line to print."""


def _code(cypher: str) -> str:
    return _NOT_CODE.sub(" ", cypher)


def _depth(code: str) -> int:
    deepest = depth = 0
    for ch in code:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def refusal(cypher: str) -> str | None:
    """The one-line reason ``cypher`` may not run, or None."""
    if len(cypher) > MAX_LENGTH:
        return (
            f"query is too long: {len(cypher):,} characters, at most {MAX_LENGTH:,} "
            "(the engine's parser would overflow its stack)"
        )
    try:
        cypher.encode("utf-8")
    except UnicodeEncodeError:
        return "query is not valid UTF-8 text"
    depth = _depth(_code(cypher))
    if depth > MAX_DEPTH:
        return (
            f"query nests brackets {depth} deep, at most {MAX_DEPTH} "
            "(the engine's parser would overflow its stack)"
        )
    m = _FORBIDDEN.search(_STRINGS.sub("''", cypher))
    if m is not None:
        word = m.group(2).upper()
        return (
            f"kg query is read-only: {word} statements are not allowed "
            "(file/database I/O)"
        )
    m = _WRITES.search(_code(cypher))
    if m is not None:
        word = m.group(1).upper()
        return (
            f"query is read-only: {word} clauses are not allowed (the graph is "
            "derived from the log; record a decision to change it)"
        )
    return None


def has_order_by(cypher: str) -> bool:
    """Whether the query orders its rows itself (outside strings and comments)."""
    return _ORDER_BY.search(_code(cypher)) is not None
