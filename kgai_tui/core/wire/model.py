"""Immutable values of the wire format: Event, Decision and Mutation (spec 2.1-2.3).

Every distinction the event hash depends on is kept: ``None`` is Go's nil (``null``) and
``()`` is an empty non-nil slice (``[]``) for ``parents`` and ``mutations``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final, NewType

ElementId = NewType("ElementId", str)
DecisionId = NewType("DecisionId", str)
EventHash = NewType("EventHash", str)


class MutOp(StrEnum):
    """Mutation operations the reference engine writes."""

    UPSERT_ELEMENT = "upsert_element"
    SET_PROP = "set_prop"
    ADD_LINK = "add_link"
    RETIRE_LINK = "retire_link"


KNOWN_OPS: Final = frozenset(op.value for op in MutOp)


@dataclass(frozen=True, slots=True)
class Mutation:
    """One change to the element graph; every field but ``op`` is omitted when empty."""

    op: str
    element_id: str = ""
    kind: str = ""
    name: str = ""
    props: tuple[tuple[str, str], ...] = ()
    from_id: str = ""
    to_id: str = ""
    link_kind: str = ""
    key: str = ""
    value: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision record: what was decided, why, by whom, and what it touched."""

    id: str
    title: str = ""
    rationale: str = ""
    author: str = ""
    refs: str = ""
    summary: str = ""
    supersedes: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    mutations: tuple[Mutation, ...] | None = None
    provenance_only: bool = False


@dataclass(frozen=True, slots=True)
class Event:
    """One immutable line of a shard."""

    hash: str
    op: str
    actor: str
    install_id: str
    lamport: int
    recorded_at: str
    parents: tuple[str, ...] | None
    decision: Decision | None
