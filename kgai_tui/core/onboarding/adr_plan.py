"""Turn parsed ADRs into ``kg ingest`` decisions: relations, order and authority.

The mapping (documented in docs/onboarding.md):

* Each ADR is one decision, titled ``ADR-0007: <title>``, back-dated to the record's
  date, authored by its decision makers, with the ref ``adr:<file>``. It upserts the
  element ``adr:ADR-0007`` with props ``title`` and ``status``, so it has authority
  there and is that element's decision in force.
* ``X supersedes N`` (written in X, or ``Superseded by X`` written in N) makes X's
  decision set ``status = superseded by ADR-X`` on ``adr:ADR-N`` and link
  ``ADR-X -SUPERSEDES-> ADR-N``. Setting a prop gives X authority on N's element, so
  the write path's automatic ``supersedes`` replaces N's decision there. X also takes
  authority (``supersedes_on``) over every element N had taken over before (a chain
  0003 → 0011 → 0019 puts 0019 in force on ADR-0003 too), so each ADR element's
  history reads as the whole chain and no element ever has two heads.
* ``X amends N`` only links ``ADR-X -AMENDS-> ADR-N``: N stays in force and X shows
  in N's history (a link touches its target without authority).
* Any other relation verb (``Clarifies``) becomes a link of that kind; ``… by``
  verbs are the other record's side and are read from there.
* ``--map`` entries link ``ADR-X -DECIDES-> service:Billing``: the ADR appears in
  Billing's history and recall without unseating Billing's own decisions in force.
* Records are imported oldest first (date, then number; an undated record sorts
  beside its numbered neighbours), and a superseded record always before the record
  that supersedes it, whatever the dates say.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from kgai_tui.core.gosem.gotext import parse_recorded
from kgai_tui.core.onboarding.adr_parse import adr_label
from kgai_tui.core.onboarding.adr_scan import ScannedAdr

ADR_KIND: Final = "adr"
SUPERSEDES: Final = "SUPERSEDES"
AMENDS: Final = "AMENDS"
DECIDES: Final = "DECIDES"
_LATEST: Final = datetime.max


def adr_ref(number: int) -> str:
    """The element reference ``adr:ADR-0007``."""
    return f"{ADR_KIND}:{adr_label(number)}"


@dataclass(slots=True)
class PlannedAdr:
    """One ADR with its resolved relations, ready to become a decision."""

    adr: ScannedAdr
    supersedes: list[int] = field(default_factory=list)
    amends: list[int] = field(default_factory=list)
    links: list[tuple[str, int]] = field(default_factory=list)
    takes_over: list[int] = field(default_factory=list)  # transitive, not direct
    domain: tuple[str, ...] = ()

    @property
    def number(self) -> int:
        """The ADR number."""
        return self.adr.record.number

    def decision_input(self) -> dict[str, Any]:
        """The ``kg ingest`` decision for this ADR (see the module docstring)."""
        rec = self.adr.record
        me = adr_ref(rec.number)
        props = {"title": rec.title}
        if rec.status:
            props["status"] = rec.status
        mutations: list[dict[str, Any]] = [
            {
                "op": "upsert_element",
                "kind": ADR_KIND,
                "name": rec.label,
                "props": props,
            }
        ]
        for n in sorted(self.supersedes):
            mutations.append(
                {
                    "op": "set_prop",
                    "element": adr_ref(n),
                    "key": "status",
                    "value": f"superseded by {rec.label}",
                }
            )
            mutations.append(_link(me, SUPERSEDES, adr_ref(n)))
        mutations += [_link(me, AMENDS, adr_ref(n)) for n in sorted(self.amends)]
        mutations += [_link(me, kind, adr_ref(n)) for kind, n in sorted(self.links)]
        mutations += [_link(me, DECIDES, ref) for ref in self.domain]
        out: dict[str, Any] = {"title": f"{rec.label}: {rec.title}"}
        rationale = rec.rationale()
        if rationale:
            out["rationale"] = rationale
        if self.adr.author:
            out["author"] = self.adr.author
        if self.adr.date:
            out["date"] = self.adr.date
        out["refs"] = [{"system": "adr", "url": self.adr.url}]
        if self.takes_over:
            out["supersedes_on"] = [adr_ref(n) for n in sorted(self.takes_over)]
        out["mutations"] = mutations
        return out


def _link(src: str, kind: str, dst: str) -> dict[str, str]:
    return {"op": "add_link", "from": src, "to": dst, "link": kind}


def _link_kind(verb: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", verb).strip("_").upper()


@dataclass(slots=True)
class _Edges:
    supersedes: set[tuple[int, int]] = field(default_factory=set)
    amends: set[tuple[int, int]] = field(default_factory=set)
    links: set[tuple[int, str, int]] = field(default_factory=set)


def _resolve(
    adrs: dict[int, ScannedAdr], known: set[int], warnings: list[str]
) -> _Edges:
    """Both sides of every relation as one set of facts; broken links are dropped."""
    edges = _Edges()
    for number, adr in sorted(adrs.items()):
        for rel in adr.record.relations:
            where = f"{adr.file}:{rel.line}"
            if rel.target == number:
                warnings.append(
                    f"{where}: {adr_label(number)} links to itself; ignored"
                )
                continue
            by_other = rel.verb.endswith(" by")
            if rel.target not in known or (by_other and rel.target not in adrs):
                warnings.append(
                    f"{where}: '{rel.verb}' links to {adr_label(rel.target)}, which "
                    "is neither in the folder nor in the store; ignored"
                )
                continue
            if rel.verb == "supersedes":
                edges.supersedes.add((number, rel.target))
            elif rel.verb == "superseded by":
                edges.supersedes.add((rel.target, number))
            elif rel.verb == "amends":
                edges.amends.add((number, rel.target))
            elif rel.verb == "amended by":
                edges.amends.add((rel.target, number))
            elif not by_other and _link_kind(rel.verb):
                edges.links.add((number, _link_kind(rel.verb), rel.target))
    return edges


def _sort_dates(adrs: dict[int, ScannedAdr]) -> dict[int, datetime]:
    """Each record's date for ordering; an undated one borrows its neighbour's."""
    dated = {
        n: moment.replace(tzinfo=None)
        for n, a in adrs.items()
        if (moment := parse_recorded(a.date)) is not None
    }
    out: dict[int, datetime] = {}
    for n in adrs:
        if n in dated:
            out[n] = dated[n]
            continue
        lower = [m for m in dated if m < n]
        higher = [m for m in dated if m > n]
        if lower:
            out[n] = dated[max(lower)]
        elif higher:
            out[n] = dated[min(higher)]
        else:
            out[n] = _LATEST
    return out


def _order(
    adrs: dict[int, ScannedAdr], edges: _Edges, warnings: list[str]
) -> list[int]:
    """Date order, then number, with every superseded or amended record first."""
    dates = _sort_dates(adrs)
    before: dict[int, set[int]] = {n: set() for n in adrs}
    for later, earlier in edges.supersedes | edges.amends:
        if later in adrs and earlier in adrs:
            before[later].add(earlier)
            if dates[later] < dates[earlier]:
                warnings.append(
                    f"{adrs[later].file}: {adr_label(later)} replaces or amends "
                    f"{adr_label(earlier)}, which is dated later; importing "
                    f"{adr_label(earlier)} first"
                )
    waiting = {n: set(p) for n, p in before.items()}
    ready = [(dates[n], n) for n, p in waiting.items() if not p]
    heapq.heapify(ready)
    order: list[int] = []
    done: set[int] = set()
    while len(order) < len(adrs):
        if not ready:  # a cycle: break it at the earliest record left
            n = min((dates[m], m) for m in adrs if m not in done)[1]
            warnings.append(
                f"{adrs[n].file}: {adr_label(n)} is part of a supersession cycle; "
                "imported in date order"
            )
            waiting[n] = set()
            heapq.heappush(ready, (dates[n], n))
        _, n = heapq.heappop(ready)
        if n in done:
            continue
        done.add(n)
        order.append(n)
        for m, preds in waiting.items():
            if n in preds:
                preds.discard(n)
                if not preds and m not in done:
                    heapq.heappush(ready, (dates[m], m))
    return order


def plan_import(
    adrs: list[ScannedAdr],
    existing: set[int],
    mapping: dict[int, tuple[str, ...]],
) -> tuple[list[PlannedAdr], list[str]]:
    """Resolve relations, order the records and attach the domain map.

    Args:
        adrs: the parsed records (unique numbers).
        existing: ADR numbers whose ``adr:ADR-NNNN`` element is already in the store.
        mapping: ``--map`` entries, ADR number to element references.

    Returns:
        The records in import order, and warnings (broken links, odd orders).
    """
    by_number = {a.record.number: a for a in adrs}
    warnings: list[str] = []
    edges = _resolve(by_number, set(by_number) | existing, warnings)
    plans = {n: PlannedAdr(a, domain=mapping.get(n, ())) for n, a in by_number.items()}
    for later, earlier in edges.supersedes:
        plans[later].supersedes.append(earlier)
    for later, earlier in edges.amends:
        plans[later].amends.append(earlier)
    for src, kind, dst in edges.links:
        plans[src].links.append((kind, dst))
    order = _order(by_number, edges, warnings)
    reach: dict[int, set[int]] = {}
    for n in order:  # superseded records come first, so their reach is known
        direct = set(plans[n].supersedes)
        owned = set(direct)
        for m in direct:
            owned |= reach.get(m, set())
        owned.discard(n)
        reach[n] = owned
        plans[n].takes_over = sorted(owned - direct)
    for n in sorted(set(mapping) - set(by_number)):
        warnings.append(f"--map names {adr_label(n)}, which is not in the folder")
    return [plans[n] for n in order], warnings
