"""Which event produced each piece of the graph at a moment (the "why" of a diff).

:func:`attribute` walks the events a replay at that moment applies, in the same
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

from collections.abc import Iterable
from dataclasses import dataclass, field

from kgai_tui.core.wire.model import Event
from kgai_tui.core.wire.props import set_prop

LinkKey = tuple[str, str, str]  # (from id, link kind, to id)


def prop_key(key: str) -> str:
    """The key as the props blob stores it (trimmed, ``=`` and line breaks replaced)."""
    return set_prop("", key, "").split("=", 1)[0]


@dataclass(slots=True)
class Attribution:
    """The event behind each element, prop and link of one replay."""

    created: dict[str, Event] = field(default_factory=dict)
    prop_set: dict[tuple[str, str], Event] = field(default_factory=dict)
    link_added: dict[LinkKey, Event] = field(default_factory=dict)
    link_retired: dict[LinkKey, Event] = field(default_factory=dict)

    def _ensure(self, eid: str, ev: Event) -> None:
        if eid and eid not in self.created:
            self.created[eid] = ev

    def _add(self, key: LinkKey, ev: Event, links: set[LinkKey]) -> None:
        if key not in links:
            links.add(key)
            self.link_added[key] = ev
            self.link_retired.pop(key, None)

    def _retire(self, key: LinkKey, ev: Event, links: set[LinkKey]) -> None:
        if key in links:
            links.discard(key)
            self.link_retired[key] = ev
            self.link_added.pop(key, None)

    def apply(self, ev: Event, links: set[LinkKey]) -> None:
        """Record what one event did (``links`` is the live link set, updated)."""
        d = ev.decision
        if d is None:
            return
        for m in d.mutations or ():
            if m.op == "upsert_element" and m.element_id:
                self._ensure(m.element_id, ev)
                for key, _ in m.props:
                    self.prop_set[(m.element_id, prop_key(key))] = ev
            elif m.op == "set_prop" and m.element_id:
                self._ensure(m.element_id, ev)
                self.prop_set[(m.element_id, prop_key(m.key))] = ev
            elif m.op == "add_link" and m.from_id and m.to_id:
                self._ensure(m.from_id, ev)
                self._ensure(m.to_id, ev)
                self._add((m.from_id, m.link_kind, m.to_id), ev, links)
            elif m.op == "retire_link":
                self._retire((m.from_id, m.link_kind, m.to_id), ev, links)
        for eid in d.shapes:
            self._ensure(eid, ev)


def attribute(events: Iterable[Event]) -> Attribution:
    """Walk gated events in canonical order (a repeated hash applies once)."""
    out = Attribution()
    links: set[LinkKey] = set()
    seen: set[str] = set()
    for ev in events:
        if ev.hash in seen:
            continue
        seen.add(ev.hash)
        out.apply(ev, links)
    return out
