"""ElementTree: the element list, filled with thousands of leaves in one go.

Textual's ``Tree`` invalidates (and schedules a layout) on every added node; for the
10,000 elements of a million-decision store that alone took most of a second on the
UI thread. Here a fill adds every node, then invalidates once. Labels arrive as
prepared ``Text`` (built in a worker, see :func:`kgai_tui.ui.views.elements.element_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text, TextType
from textual.widgets import Tree
from textual.widgets.tree import TreeNode


class ElementTree(Tree[str]):
    """A ``Tree`` of kind branches and element leaves, filled in bulk."""

    def __init__(self, label: TextType, *, id: str | None = None) -> None:
        """An empty tree; :meth:`fill` puts the elements in."""
        self._bulk = False
        super().__init__(label, id=id)

    def fill(
        self, groups: Sequence[tuple[Text, Sequence[tuple[Text, str]], int]]
    ) -> None:
        """Replace the tree by expanded branches of ``(label, element id)`` leaves,
        each ending with a line saying how many more it leaves out, if any.

        The cursor is taken off first: Textual would otherwise put it back at the
        old cursor node's line in the new tree, on whatever element is there now,
        and announce that element as highlighted (as if the user had chosen it).
        """
        self.cursor_line = -1
        self.clear()
        self._bulk = True
        try:
            for label, leaves, more in groups:
                branch = self.root.add(label, expand=True)
                for leaf, eid in leaves:
                    branch.add_leaf(leaf, data=eid)
                if more:
                    branch.add_leaf(Text(f"… {more:,} more: type to filter", "dim"))
        finally:
            self._bulk = False
        self._invalidate()

    def say(self, message: Text) -> None:
        """Replace the tree by one line saying why it is empty."""
        self.cursor_line = -1
        self.clear()
        self.root.add_leaf(message)

    def _invalidate(self) -> None:
        # One invalidation per fill, not one per node (see the module docstring).
        if not self._bulk:
            super()._invalidate()

    def process_label(self, label: TextType) -> Text:
        """Keep a one-line ``Text`` as it is (the base class copies every label)."""
        if isinstance(label, Text) and "\n" not in label.plain:
            return label
        return super().process_label(label)

    def get_label_width(self, node: TreeNode[str]) -> int:
        """A leaf is as wide as its label (no icon); skip rendering it to measure."""
        label = node.label
        if not node.allow_expand and isinstance(label, Text):
            return label.cell_len
        return super().get_label_width(node)
