"""An element's story: every decision that shaped it, oldest first, told whole.

Each entry says who decided, when, why, its status on the element (the one
legend, :mod:`~kgai_tui.core.reads.legend`), and what it replaced and what
replaced it *on this element*: a decision superseding one that shaped the
element replaced it here only when the superseder decides the element too
(spec 4.2). Replacements that happened on other elements are kept apart, so
"replaced by" never names a later decision that merely touched the same element.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kgai_tui.core.reads.legend import Status
from kgai_tui.core.reads.view import Decision, KgView

__all__ = ["StoryEntry", "element_story"]


@dataclass(frozen=True, slots=True)
class StoryEntry:
    """One decision in an element's story."""

    decision: Decision
    status: Status
    """Its status on this element."""
    replaces: tuple[int, ...]
    """Decisions it superseded that had decided this element, oldest first."""
    replaced_by: tuple[int, ...]
    """Decisions that superseded it and decide this element, oldest first."""
    replaced_elsewhere: tuple[int, ...]
    """Decisions that superseded it without deciding this element, oldest first."""


def element_story(
    v: KgView, eid: str, told: Sequence[int] | None = None
) -> list[StoryEntry]:
    """Every decision that shaped ``eid``, oldest first (time, lamport, id); or
    only those of ``told``, a part of :meth:`KgView.history` (a list shows the
    newest few: each entry reads its decision)."""
    shapers = v.decisions_of(eid)
    story = []
    for idx in v.history(eid) if told is None else told:
        d = v.decision(idx)
        here = [s for s in d.superseded_by if shapers.get(s)]
        elsewhere = [s for s in d.superseded_by if not shapers.get(s)]
        replaces = [s for s in d.supersedes if s in shapers]
        story.append(
            StoryEntry(
                decision=d,
                status=v.status_on(eid, idx),
                replaces=tuple(v.oldest_first(replaces)),
                replaced_by=tuple(v.oldest_first(here)),
                replaced_elsewhere=tuple(v.oldest_first(elsewhere)),
            )
        )
    return story
