"""QuietFooter: Textual's footer, rebuilt only when the keys it shows change."""

from __future__ import annotations

from textual.widgets import Footer


class QuietFooter(Footer):
    """A ``Footer`` that skips rebuilds which would show the same keys.

    The stock footer recomposes (a dozen key widgets, styled anew) on every binding
    signal. At start-up, focus and screen-stack changes send five of them in a row
    while the store is opening in a worker; threads share one interpreter lock, so
    each identical rebuild delayed the first view.
    """

    def __init__(self) -> None:
        """A footer with the default look."""
        super().__init__()
        self._shown: object = None

    def _keys(self) -> object:
        """Everything the footer's content depends on."""
        bindings = tuple(
            (key, binding, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in (
                self.screen.active_bindings.items()
            )
        )
        return (self.app.app_focus, self.compact, self.show_command_palette, bindings)

    async def recompose(self) -> None:
        """Rebuild, unless the same keys are on screen already."""
        if not self.is_attached:
            await super().recompose()
            return
        keys = self._keys()
        if self.children and keys == self._shown:
            return
        self._shown = keys
        await super().recompose()
