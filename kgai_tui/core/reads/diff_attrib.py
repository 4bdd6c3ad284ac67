"""Which event produced each piece of the graph at a moment (the "why" of a diff).

:class:`Attribution` walks the events a replay at that moment applies, in the same
canonical order and with the same rules as :class:`~kgai_tui.core.replay.projection.Projection`
(spec 4), and remembers, for every element, prop and link, the event that gave it its
final state:

* an element: the first event that brought it into existence (that one fixes its kind
  and name; stubs included);
* a prop ``(element, key)``: the last event that set that key;
* a link ``(from, kind, to)`` present at the end: the event that created it after its
  last retirement (re-adding a present link changes nothing, so it is not the cause);
* a link absent at the end: the event that last retired it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from kgai_tui.core.wire.props import set_prop

LinkKey = tuple[str, str, str]  # (from id, link kind, to id)
#: An event as its canonical JSON dict (Go field names, empty fields omitted): what
#: the replay applies, read from the shard line (or Go's reading of an odd line).
EventObj = dict[str, Any]


@functools.lru_cache(maxsize=1 << 16)
def prop_key(key: str) -> str:
    """The key as the props blob stores it (trimmed, ``=`` and line breaks replaced).

    Cached: a walk over a big log meets the same few keys millions of times."""
    return set_prop("", key, "").split("=", 1)[0]


@dataclass(slots=True)
class Attribution:
    """The event behind each element, prop and link of one replay."""

    created: dict[str, EventObj] = field(default_factory=dict)
    prop_set: dict[tuple[str, str], EventObj] = field(default_factory=dict)
    link_added: dict[LinkKey, EventObj] = field(default_factory=dict)
    link_retired: dict[LinkKey, EventObj] = field(default_factory=dict)
    #: The live link set while walking (what the replay's graph holds then).
    links: set[LinkKey] = field(default_factory=set)

    def _ensure(self, eid: str, ev: EventObj) -> None:
        if eid and eid not in self.created:
            self.created[eid] = ev

    def _add(self, key: LinkKey, ev: EventObj) -> None:
        if key not in self.links:
            self.links.add(key)
            self.link_added[key] = ev
            self.link_retired.pop(key, None)

    def _retire(self, key: LinkKey, ev: EventObj) -> None:
        if key in self.links:
            self.links.discard(key)
            self.link_retired[key] = ev
            self.link_added.pop(key, None)

    def apply(self, ev: EventObj) -> None:
        """Record what one event (not seen before) did."""
        d = ev.get("decision")
        if d is None:
            return
        for m in d.get("mutations") or ():
            op = m.get("op", "")
            eid = m.get("element_id", "")
            if op == "upsert_element" and eid:
                self._ensure(eid, ev)
                for key in m.get("props") or ():
                    self.prop_set[(eid, prop_key(key))] = ev
            elif op == "set_prop" and eid:
                self._ensure(eid, ev)
                self.prop_set[(eid, prop_key(m.get("key", "")))] = ev
            elif op == "add_link":
                src, dst = m.get("from_id", ""), m.get("to_id", "")
                if src and dst:
                    self._ensure(src, ev)
                    self._ensure(dst, ev)
                    self._add((src, m.get("link_kind", ""), dst), ev)
            elif op == "retire_link":
                key = (m.get("from_id", ""), m.get("link_kind", ""), m.get("to_id", ""))
                self._retire(key, ev)
        for eid in d.get("shapes") or ():
            self._ensure(eid, ev)
