"""The command palette's provider: the views on opening, any element or decision by name."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from kgai_tui.ui.commands import VIEWS, command
from kgai_tui.ui.safe_text import one_line

if TYPE_CHECKING:
    from kgai_tui.ui.snapshot import Snapshot


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


class JumpProvider(Provider):
    """Command palette: jump to any element or decision by name."""

    @property
    def _jumps(self) -> Jumps:
        return cast("Jumps", self.app)

    def _items(self) -> list[tuple[str, str, str]]:
        snapshot = self._jumps.snapshot
        if snapshot is None:
            return []
        v = snapshot.view
        items = [(f"element: {v.label(e)}", "e", e) for e in v.element_ids()]
        items += [(f"decision: {title}", "d", str(i)) for i, title in v.titled()]
        return items

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
        matcher = self.matcher(query)
        for label, kind, ref in self._items():
            score = matcher.match(label)
            if score > 0:
                action = (
                    partial(app.open_element, ref)
                    if kind == "e"
                    else partial(app.open_decision, int(ref))
                )
                yield Hit(score, matcher.highlight(one_line(label, 100)), action)
