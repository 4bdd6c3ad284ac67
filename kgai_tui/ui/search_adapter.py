"""Bridge from the Search view to the core search index (filled in with issue 4)."""

from __future__ import annotations

from dataclasses import dataclass

from kgai_tui.ui.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class UiHit:
    """What the Search view shows for one hit."""

    kind: str
    id: str
    name: str
    extra: str
    elements: tuple[str, ...]
    terms: tuple[str, ...]


def run_search(
    snapshot: Snapshot, query: str, *, include_all: bool
) -> tuple[list[UiHit], str]:
    """Run a query as of the snapshot's moment; returns hits and a caption note."""
    return [], " (search index not built yet)"
