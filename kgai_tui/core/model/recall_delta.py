"""The recall element delta a model keeps in its ``meta`` (``recall_delta``).

Read by every update (and every recall read), so it imports no NumPy: the usual
``record`` neither writes a recall file nor needs the arrays. What the delta means
for a query: :mod:`kgai_tui.core.recall.element_delta`.
"""

from __future__ import annotations

import marshal
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.model.rows import ModelCorruptError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kgai_tui.core.recall.fields import Fields
    from kgai_tui.core.recall.segments import Elements

__all__ = ["ELEMENT_DELTA_MAX", "ElementDelta", "stored_delta"]

#: Elements changed or added since the element part before it is written again
#: (a recall read builds the fields of this many from their attributes).
ELEMENT_DELTA_MAX: Final = 4096


@dataclass(slots=True)
class ElementDelta:
    """The elements changed (``stale`` positions in the stored part, ascending)
    or added (``new`` ids, in graph order) since the element part was written,
    and the attributes ``(kind, name, props)`` each has now, by id."""

    stale: list[int] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    attrs: dict[str, tuple[str, str, str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        """Whether any element is in it."""
        return bool(self.stale or self.new)

    def value(self) -> tuple[Any, ...]:
        """As stored (marshal-able)."""
        return self.stale, self.new, self.attrs

    @classmethod
    def from_value(cls, value: Any) -> ElementDelta:
        """From :meth:`value`'s.

        Raises:
            ValueError: not a delta's value.
        """
        try:
            stale, new, attrs = value
            return cls(
                [int(k) for k in stale],
                [str(e) for e in new],
                {str(e): (str(a[0]), str(a[1]), str(a[2])) for e, a in attrs.items()},
            )
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            raise ValueError("not an element delta") from exc

    def ordered_attrs(self, ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """The attributes of the stale elements (``ids``: every id before the
        delta's new ones, by position), then of the new ones: the order the
        delta's fields are made in.

        Raises:
            ValueError: the delta does not fit ``ids``.
        """
        try:
            return [self.attrs[e] for e in (*(ids[k] for k in self.stale), *self.new)]
        except (IndexError, KeyError) as exc:
            raise ValueError("the element delta does not fit its part") from exc

    def elements(self, base: Elements, fields: Fields | None = None) -> Elements:
        """``base`` answering with this delta (``fields``: its own, stored).

        Raises:
            ValueError: the delta does not fit ``base``.
        """
        from kgai_tui.core.recall.element_delta import DeltaElements

        attrs = self.ordered_attrs(base.ids)
        return DeltaElements(base, self.stale, self.new, attrs, fields)


def stored_delta(db: sqlite3.Connection) -> ElementDelta:
    """The model's element delta (none in a model written before it was kept)."""
    hit = db.execute("SELECT v FROM meta WHERE k = 'recall_delta'").fetchone()
    if hit is None:
        return ElementDelta()
    try:
        return ElementDelta.from_value(marshal.loads(hit[0]))
    except (ValueError, EOFError, TypeError) as exc:
        raise ModelCorruptError("the recall element delta does not decode") from exc
