"""An answer and its one encoder: the bytes every face prints for a read.

Each read in this package returns an :class:`Answer` (the JSON object, keys in
output order, and whether it holds floats); :func:`encode` turns it into the bytes
``kgai-tui <read> --json`` prints, an MCP tool returns and the agent view shows.
A failure has one shape everywhere too: :func:`failure` -> ``{"error", "ok": false}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kgai_tui.core.errors import KgaiError, StoreNotFoundError
from kgai_tui.core.interrupts import Interrupted
from kgai_tui.core.safe_text import escape_json_controls
from kgai_tui.core.store.discovery import StoreLocation

__all__ = [
    "Answer",
    "chunks_of",
    "encode",
    "failure",
    "failure_message",
    "first_line",
    "no_store",
    "split_paths",
    "with_pending",
]


@dataclass(frozen=True, slots=True)
class Answer:
    """One read's answer, before it is printed.

    Attributes:
        obj: the JSON-like value, keys already in output order; the text renderers
            of :mod:`kgai_tui.text` take it as it is.
        floats: it holds floats, printed as Go does (``15``, not ``15.0``); only
            answers with floats pay for the extra walk.
        extra: what a text renderer may add to ``obj`` (see the attribute).
    """

    obj: dict[str, Any]
    floats: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Facts for the text renderers that kg's JSON does not carry (never encoded):
    ``history``'s one-legend status of each decision on the element."""
    stream: Callable[[Mapping[str, Any]], Iterator[bytes]] | None = None
    """An answer too large to hold (``export``: 300 MB at a million decisions): its
    bytes, made as they are written, given the keys printed after its own; ``obj``
    then holds only those keys (``pending_approval``)."""

    @property
    def ok(self) -> bool:
        """False when the answer is a failure (``"ok": false``, as doctor's can be)."""
        return self.obj.get("ok") is not False


def encode(answer: Answer) -> bytes:
    """The answer's bytes: Go's ``MarshalIndent`` plus ``\\n`` (:func:`chunks_of`,
    joined)."""
    return b"".join(chunks_of(answer))


def chunks_of(answer: Answer) -> Iterator[bytes]:
    """The answer's bytes in pieces, as they are made: a streamed answer's, or
    Go's ``MarshalIndent`` of the object a long list's slice at a time (never the
    whole answer held as bytes).

    DEL, C1, bidi, zero-width and other format characters are written as
    ``\\uXXXX`` escapes (Go's encoder writes them raw): the value is the same, and
    the bytes cannot act on a terminal they are printed to.
    """
    if answer.stream is not None:
        return answer.stream(answer.obj)
    # The encoder (orjson, json, decimal) loads when an answer is printed, not when
    # a command module is imported.
    from kgai_tui.core.gosem.gojson import marshal_indent_chunks, with_go_floats

    obj = with_go_floats(answer.obj) if answer.floats else answer.obj
    return (escape_json_controls(piece) for piece in marshal_indent_chunks(obj))


def first_line(message: str) -> str:
    """The one line a failure is reported as (``"failed"`` when there is none)."""
    stripped = message.strip()
    return stripped.splitlines()[0] if stripped else "failed"


def failure_message(exc: KgaiError | Interrupted | OSError) -> str:
    """What a failed read or write says: the core's message, the signal's, or the
    file system's (``strerror: filename``)."""
    if isinstance(exc, Interrupted):
        return exc.describe()
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    return str(exc)


def with_pending(answer: Answer, pending: str) -> Answer:
    """The answer with ``pending_approval``: the project's ``.kgairc`` that waits
    for approval on this machine (``""``: none, the answer as it is). Added to
    every successful answer, so a script or an agent learns that the repository
    asks for a store or capture rules that are not in effect yet."""
    if not pending or answer.obj.get("ok") is False or "pending_approval" in answer.obj:
        return answer
    return replace(answer, obj={**answer.obj, "pending_approval": pending})


def failure(message: str) -> Answer:
    """The failure answer: ``{"error": <first line>, "ok": false}``."""
    return Answer({"error": first_line(message), "ok": False})


def no_store(location: StoreLocation) -> StoreNotFoundError:
    """The error every face raises when nothing is at the discovered location."""
    error = StoreNotFoundError(
        f"no kgai store at {location.root} (found via {location.source}); "
        "pass --store PATH or set KGAI_STORE"
    )
    error.location = location
    return error


def split_paths(values: str | Sequence[str]) -> list[str]:
    """Split path arguments the way ``--paths a,b`` is split: commas, trimmed.

    Args:
        values: one comma-separated string, or several strings (each may itself
            hold commas); empty parts are dropped.
    """
    items = [values] if isinstance(values, str) else list(values)
    return [part.strip() for item in items for part in item.split(",") if part.strip()]
