"""The command palette's provider: the views on opening, any element or decision by name.

Matching costs ~5 µs an element label and ~40 µs a decision title (Textual's
fuzzy matcher), on the UI's event loop: over a million decisions every key
waited a minute and the explorer grew to 1.2 GB (measured). The provider reads
the labels once per palette, yields to the loop every few hundred (a key typed
meanwhile cancels the search) and matches decision titles only in a store of at
most :data:`PALETTE_DECISIONS`; a larger one offers its decisions through the
Search view (BM25 over every decision) instead.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Final, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from kgai_tui.core.reads.view import element_label
from kgai_tui.ui.commands import VIEWS, command
from kgai_tui.ui.safe_text import one_line

if TYPE_CHECKING:
    from kgai_tui.ui.snapshot import Snapshot


#: Decisions a store may hold for the palette to match their titles.
PALETTE_DECISIONS: Final = 5000
#: Labels matched between two yields to the event loop.
_BATCH: Final = 400
#: An item: its label, ``"e"`` or ``"d"``, the element id or decision index.
_Item = tuple[str, str, str]


class Jumps(Protocol):
    """What the provider needs of the app (it never imports the app)."""

    @property
    def snapshot(self) -> Snapshot | None:
        """What is on screen (``None`` until the store is open)."""
        ...

    def show_view(self, key: str) -> None:
        """Switch to a view."""
        ...

    def open_element(self, element_id: str, view: str = "elements") -> None:
        """Show an element."""
        ...

    def open_decision(self, index: int) -> None:
        """Open a decision's record."""
        ...

    def search_for(self, words: str) -> None:
        """Search the store in the Search view."""
        ...


class JumpProvider(Provider):
    """Command palette: jump to any element or decision by name."""

    _read: tuple[Snapshot, list[_Item], bool] | None = None

    @property
    def _jumps(self) -> Jumps:
        return cast("Jumps", self.app)

    def _items(self) -> tuple[list[_Item], bool]:
        """The elements (and the decisions of a small store) on screen, read once
        per palette and snapshot; whether the decisions are among them."""
        snapshot = self._jumps.snapshot
        if snapshot is None:
            return [], True
        if self._read is not None and self._read[0] is snapshot:
            return self._read[1], self._read[2]
        v = snapshot.view
        items = [
            (f"element: {element_label(e, kind, name)}", "e", e)
            for e, kind, name in v.element_names()
        ]
        items.sort()
        few = snapshot.projection.recorded_count() <= PALETTE_DECISIONS
        if few:
            items += [(f"decision: {title}", "d", str(i)) for i, title in v.titled()]
        self._read = (snapshot, items, few)
        return items, few

    async def discover(self) -> Hits:
        """Offer the views when the palette opens."""
        app = self._jumps
        for key, _ in VIEWS:
            spec = command(f"kgai.view.{key}")
            yield DiscoveryHit(
                spec.palette or "",
                partial(app.show_view, key),
                help=spec.palette_help,
            )

    async def search(self, query: str) -> Hits:
        """Fuzzy-match element names and decision titles."""
        app = self._jumps
        items, few = self._items()
        if not few and query.strip():
            yield Hit(
                1.0,
                f"search decisions: {one_line(query.strip(), 80)}",
                partial(app.search_for, query.strip()),
                help="BM25 over every decision, in the Search view",
            )
        matcher = self.matcher(query)
        for n, (label, kind, ref) in enumerate(items):
            if n % _BATCH == 0:
                await asyncio.sleep(0)  # a key typed meanwhile cancels this
            score = matcher.match(label)
            if score > 0:
                action = (
                    partial(app.open_element, ref)
                    if kind == "e"
                    else partial(app.open_decision, int(ref))
                )
                yield Hit(score, matcher.highlight(one_line(label, 100)), action)
