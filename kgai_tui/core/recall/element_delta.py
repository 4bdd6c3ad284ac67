"""A stored element part with the elements changed or added since it was written.

Rewriting the element part tokenizes every element again, and first loads the
whole element graph to walk it: ~1.2 s of a 1,000-event append at 10M decisions
(100k elements) that changed 1,333 of them. So an update that changes elements
records which instead (:class:`ElementDelta`: positions in the stored part whose
attributes changed, ids added since in graph order, and the attributes of both
now), and a reader scores those from those attributes, exactly as the stored part would if it were
written again: an element's score only depends on its own fields (a token's match
strength is the same whatever other tokens the vocabulary holds). The part is
written again once the delta passes
:data:`~kgai_tui.core.model.recall_delta.ELEMENT_DELTA_MAX`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kgai_tui.core.recall.fields import Fields
from kgai_tui.core.recall.segments import (
    Elements,
    element_fields,
    stored_paths,
)
from kgai_tui.core.recall.tokens import F64, I32

__all__ = ["DeltaElements"]


class DeltaElements(Elements):
    """Element fields answering from stored ones and a delta of elements,
    position for position what :class:`Elements` of the current graph answers."""

    def __init__(
        self,
        base: Elements,
        stale: Sequence[int],
        new_ids: Sequence[str],
        attrs: Sequence[tuple[str, str, str]],
        fields: Fields | None = None,
    ) -> None:
        """``stale`` positions of ``base`` and ``new_ids`` (after ``base``'s, in
        graph order) hold ``attrs`` now, stale ones first in ascending order;
        ``fields``: theirs, when stored (else made from ``attrs``). ``base`` may
        be a delta itself: a stored one under the one an update keeps."""
        n = len(base.ids)
        positions = [*sorted(set(stale)), *range(n, n + len(new_ids))]
        if len(attrs) != len(positions) or any(k >= n for k in stale):
            raise ValueError("the element delta does not fit its part")
        self.ids = [*base.ids, *new_ids]
        n_stale = len(positions) - len(new_ids)
        self.attrs = [*base.attrs, *attrs[n_stale:]]
        for k, a in zip(positions[:n_stale], attrs[:n_stale], strict=True):
            self.attrs[k] = a
        self.fields = base.fields  # the stored rows; the delta's are below
        self._base_elements = base
        self._base = n
        self._at = np.asarray(positions, dtype=np.int64)
        self._stale = np.zeros(n, dtype=np.bool_)
        self._stale[self._at[self._at < n]] = True
        self._delta = element_fields(attrs) if fields is None else fields
        if self._delta.n != len(positions):
            raise ValueError("the element delta's fields do not fit it")
        kept = [(k, p) for k, p in base.paths if not self._stale[k]]
        self.paths = sorted(kept + stored_paths(attrs, positions))

    def about(self, q_toks: Sequence[str]) -> F64 | None:
        """As :meth:`Elements.about` of the current elements."""
        stored = self._base_elements.about(q_toks)
        delta = self._delta.score(q_toks)
        if stored is None and delta is None:
            return None
        out = np.zeros(len(self.ids), dtype=np.float64)
        if stored is not None:
            out[: self._base] = stored
        out[self._at] = 0.0 if delta is None else delta
        return out

    def named(self, qb: bytes) -> I32:
        """As :meth:`Elements.named` of the current elements."""
        stored = self._base_elements.named(qb)
        stored = stored[~self._stale[stored]]
        delta = self._at[self._delta.rows_with(qb, 0)]
        return np.sort(np.concatenate([stored, delta.astype(np.int32)]))
