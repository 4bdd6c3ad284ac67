"""The YAML front matter of MADR files, read with PyYAML's safe loader.

MADR 3 and 4 open a record with::

    ---
    status: accepted
    date: 2024-03-01
    decision-makers: [Ana Ruiz, "Bo Chen"]
    consulted: |
      Cy Park
      the support team
    ---

The block between the ``---`` lines is YAML: block scalars, flow and block lists,
nested lists and mappings are all read. Values are kept as written: every scalar is
a string (``2024-03-01`` stays ``"2024-03-01"``, ``0012`` stays ``"0012"``), a null
(``~``, ``null`` or nothing) is ``""``.

Hostile input is refused with the line it is on, before any value is built:

* front matter over :data:`MAX_BYTES` (measured in UTF-8) or nested deeper than
  :data:`MAX_DEPTH`;
* aliases (``*name``), so an alias "bomb" cannot expand;
* any explicit tag other than the plain ``!!str``, ``!!seq``, ``!!map`` and
  ``!!null`` (``!!python/object:…`` included); no constructor runs at all, the
  composed node tree is walked instead;
* duplicate keys, keys that are not plain strings, a top level that is not a
  mapping.

PyYAML is imported on first use, so reading a store never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from yaml.nodes import Node

MAX_BYTES: Final = 64 * 1024
MAX_DEPTH: Final = 32

_STR: Final = "tag:yaml.org,2002:str"
_SEQ: Final = "tag:yaml.org,2002:seq"
_MAP: Final = "tag:yaml.org,2002:map"
_NULL: Final = "tag:yaml.org,2002:null"

Value = str | list["Value"] | dict[str, "Value"]


class FrontMatterError(ValueError):
    """Front matter that is not YAML, or that this reader refuses."""

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


class _Refused(Exception):
    """A refusal; ``line`` is 0-based within the block."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@cache
def _loader() -> type[Any]:
    """A ``SafeLoader`` that refuses aliases and deep nesting and resolves no types.

    Only the null resolver is kept, so ``2024-03-01``, ``yes`` and ``012`` are
    strings as written, and any other tag on a node was written explicitly.
    """
    import yaml  # lazy: the CLI's start-up never needs it
    from yaml.events import AliasEvent

    null_resolvers = {
        first: [(tag, regexp) for tag, regexp in pairs if tag == _NULL]
        for first, pairs in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    class Loader(yaml.SafeLoader):
        yaml_implicit_resolvers = {  # noqa: RUF012 (PyYAML's class-level table)
            k: v for k, v in null_resolvers.items() if v
        }

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise _Refused(
                    event.start_mark.line,
                    f"aliases ('*{event.anchor}') are not supported",
                )
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    deep = self.peek_event()  # type: ignore[no-untyped-call]
                    raise _Refused(
                        deep.start_mark.line, f"nested deeper than {MAX_DEPTH} levels"
                    )
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return Loader


def _value(node: Node) -> Value:
    """A node as strings, lists and dicts; a tag outside the plain four is refused."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    line = node.start_mark.line
    if node.tag == _NULL:
        return ""
    if isinstance(node, ScalarNode) and node.tag == _STR:
        return str(node.value)
    if isinstance(node, MappingNode) and node.tag == _MAP:
        return {key: value for key, (_, value) in _mapping(node).items()}
    if isinstance(node, SequenceNode) and node.tag == _SEQ:
        return [_value(item) for item in node.value]
    raise _Refused(line, f"unsupported YAML tag {node.tag!r}")


def _mapping(node: Any) -> dict[str, tuple[int, Value]]:
    """A mapping's keys (lower case), each with its 0-based line and its value."""
    from yaml.nodes import ScalarNode

    out: dict[str, tuple[int, Value]] = {}
    for key_node, value_node in node.value:
        line = key_node.start_mark.line
        if not isinstance(key_node, ScalarNode) or key_node.tag != _STR:
            raise _Refused(line, "a key must be a plain string")
        key = str(key_node.value).lower()
        if key in out:
            raise _Refused(line, f"duplicate key {key!r}")
        out[key] = (line, _value(value_node))
    return out


_UNCLOSED: Final = {
    "while parsing a flow sequence": "unterminated flow list (missing ']')",
    "while parsing a flow mapping": "unterminated flow mapping (missing '}')",
    "while scanning a quoted scalar": "unterminated quoted string",
}


def _yaml_message(context: str | None, problem: str | None) -> str:
    """PyYAML's context and problem as one line (an unclosed bracket said plainly)."""
    if context in _UNCLOSED and problem is not None and "<stream end>" in problem:
        return _UNCLOSED[context]
    text = "; ".join(p for p in (context, problem) if p) or "not valid YAML"
    return " ".join(text.split())


def _parse_block(text: str, first_line: int) -> dict[str, Field]:
    """Parse the YAML between the delimiters; ``first_line`` is its 1-based line."""
    import yaml

    loader = _loader()(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return {}
        if root.tag != _MAP:
            raise _Refused(root.start_mark.line, "expected 'key: value' lines")
        return {
            key: Field(value, first_line + line)
            for key, (line, value) in _mapping(root).items()
        }
    except _Refused as exc:
        raise FrontMatterError(first_line + exc.line, exc.message) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark is not None else first_line
        raise FrontMatterError(line, _yaml_message(exc.context, exc.problem)) from None
    except yaml.YAMLError as exc:
        message = " ".join(str(exc).split()) or "not valid YAML"
        raise FrontMatterError(first_line, message) from None
    finally:
        loader.dispose()


def parse_front_matter(lines: list[str]) -> FrontMatter | None:
    """Parse the front matter at the top of a file's lines, if it has one.

    Args:
        lines: the file's lines without line ends.

    Returns:
        ``None`` when the first line is not ``---``; otherwise the fields and the
        index of the first body line.

    Raises:
        FrontMatterError: the block is never closed, is too large, is not YAML, or
            uses a construct refused above.
    """
    if not lines or lines[0].rstrip() != "---":
        return None
    size = 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            # No line end after the last line: an error at the end of the block
            # (an unclosed ``[``) is reported on the block's last line.
            fields = _parse_block("\n".join(lines[1:index]), 2)
            return FrontMatter(fields, index + 1)
        size += len(lines[index].encode("utf-8", "surrogatepass")) + 1
        if size > MAX_BYTES:
            raise FrontMatterError(
                1, f"front matter is larger than {MAX_BYTES // 1024} KB"
            )
    raise FrontMatterError(1, "front matter opened with '---' is never closed")
