"""Turn a decision input into the decision ``kg ingest`` would write (spec 5.2-5.6).

``build_decision`` is ``buildDecisionEvent``: it resolves element references, emits
implicit upserts, works out authority (``targets``) and the automatic ``supersedes``
from the projection as it is now, and derives ``summary``, ``refs`` and the id. It is
a pure function of its inputs; writing is :mod:`kgai_tui.core.write.writes`' job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gotext import go_quote, go_trim_space, go_upper, parse_recorded
from kgai_tui.core.wire.codec import decision_id
from kgai_tui.core.wire.ids import element_id, resolve_ref
from kgai_tui.core.wire.model import Decision, Mutation, MutOp

if TYPE_CHECKING:
    from datetime import datetime

    from kgai_tui.core.replay.projection import Projection
    from kgai_tui.core.write.ingest_input import DecisionInput, MutationInput, RefInput

#: Titles are one-liners; a longer one is almost surely a mistake (a file pasted
#: into the wrong field), and a shard line must stay readable by every engine.
MAX_TITLE_BYTES: Final = 1024 * 1024
NO_SHAPE_WARNING: Final = (
    "decision {title} shapes no element — kg context/history recall works per "
    "element, so attach one (a single upsert_element mutation is enough)"
)


@dataclass(slots=True)
class BuiltDecision:
    """A decision ready to be stamped into an event, with what building it found."""

    decision: Decision
    elements: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def short_title(title: str, limit: int = 60) -> str:
    """Return the title Go-quoted and cut to ``limit`` characters, for messages."""
    cut = title if len(title) <= limit else title[:limit] + "…"
    return go_quote(cut)


def check_title(title: str) -> None:
    """Validate a decision title: non-blank and at most 1 MiB.

    Raises:
        UsageError: the title is blank or too long.
    """
    size = len(title.encode("utf-8", "surrogatepass"))
    if size > MAX_TITLE_BYTES:
        raise UsageError(
            f"decision title {short_title(title)} is {size} bytes; the limit is "
            f"{MAX_TITLE_BYTES} bytes (1 MiB)"
        )
    if not go_trim_space(title):
        raise UsageError('decision missing required "title"')


def parse_decision_date(title: str, date: str) -> datetime | None:
    """Parse a decision's ``date`` (RFC3339, ``YYYY-MM-DDTHH:MM:SS`` or ``YYYY-MM-DD``).

    Returns:
        The UTC moment, or ``None`` when ``date`` is empty.

    Raises:
        UsageError: the date is set but matches none of the layouts.
    """
    if date == "":
        return None
    moment = parse_recorded(go_trim_space(date))
    if moment is None:
        raise UsageError(
            f"decision {short_title(title)}: invalid date {go_quote(date)} "
            "(use YYYY-MM-DD or RFC3339)"
        )
    return moment


def refs_string(refs: Iterable[RefInput]) -> str:
    """Join refs as ``system:url`` separated by single spaces (spec 5.6)."""
    return " ".join(f"{r.system}:{r.url}" for r in refs)


def summary_string(mutations: Iterable[MutationInput]) -> str:
    """Describe the raw input mutations, joined with ``"; "`` (spec 5.6)."""
    parts: list[str] = []
    for m in mutations:
        if m.op == MutOp.UPSERT_ELEMENT:
            parts.append(f"element {m.name}")
        elif m.op == MutOp.ADD_LINK:
            parts.append(f"link {m.from_}-{m.link}->{m.to}")
        elif m.op == MutOp.RETIRE_LINK:
            parts.append(f"retire {m.from_}-{m.link}->{m.to}")
        elif m.op == MutOp.SET_PROP:
            parts.append(f"set {m.element}.{m.key}")
    return "; ".join(parts)


def finish_decision(
    projection: Projection,
    *,
    title: str,
    rationale: str,
    author: str,
    refs: str,
    summary: str,
    mutations: Sequence[Mutation] | None,
    shapes: Iterable[str],
    targets: Iterable[str],
) -> Decision:
    """Complete a decision: supersedes from current heads, sorted sets, id.

    ``supersedes`` is the union of the current heads of every target, so recording a
    decision with authority over an element replaces what was in force there.
    """
    target_set = set(targets)
    superseded = {
        projection.dec_id[i]
        for eid in target_set
        if eid
        for i in projection.heads_of(eid)
    }
    decision = Decision(
        id="",
        title=title,
        rationale=rationale,
        author=author,
        refs=refs,
        summary=summary,
        supersedes=tuple(sorted(superseded)),
        shapes=tuple(sorted({s for s in shapes if s})),
        targets=tuple(sorted(target_set)),
        mutations=tuple(mutations) if mutations else None,
        provenance_only=not target_set,
    )
    return replace(decision, id=decision_id(decision))


class _Builder:
    """The per-decision state of ``buildDecisionEvent``: shapes, targets, upserted."""

    def __init__(self, projection: Projection) -> None:
        self.projection = projection
        self.mutations: list[Mutation] = []
        self.shapes: set[str] = set()
        self.targets: set[str] = set()
        self.upserted: set[str] = set()
        self.elements: dict[str, str] = {}

    def target(self, eid: str) -> None:
        self.targets.add(eid)
        self.shapes.add(eid)

    def resolve(self, token: str) -> tuple[str, str, str]:
        kind, name, eid = resolve_ref(token)
        if eid:
            self.elements[name] = eid
        return kind, name, eid

    def implicit_upsert(self, kind: str, name: str, eid: str) -> None:
        if eid in self.upserted:
            return
        self.mutations.append(
            Mutation(op=MutOp.UPSERT_ELEMENT, element_id=eid, kind=kind, name=name)
        )
        self.upserted.add(eid)
        self.shapes.add(eid)

    def add(self, m: MutationInput) -> None:
        if m.op == MutOp.UPSERT_ELEMENT:
            self.upsert(m)
        elif m.op == MutOp.SET_PROP:
            kind, name, eid = self.resolve(m.element)
            if not eid:
                raise UsageError('set_prop missing "element"')
            self.implicit_upsert(kind, name, eid)
            self.mutations.append(
                Mutation(op=MutOp.SET_PROP, element_id=eid, key=m.key, value=m.value)
            )
            self.target(eid)
        elif m.op in (MutOp.ADD_LINK, MutOp.RETIRE_LINK):
            from_kind, from_name, from_id = self.resolve(m.from_)
            to_kind, to_name, to_id = self.resolve(m.to)
            if not from_id or not to_id or not go_trim_space(m.link):
                raise UsageError(f"{m.op} requires from, to and link")
            self.implicit_upsert(from_kind, from_name, from_id)
            self.implicit_upsert(to_kind, to_name, to_id)
            self.mutations.append(
                Mutation(
                    op=m.op,
                    element_id=from_id,
                    from_id=from_id,
                    to_id=to_id,
                    link_kind=go_upper(m.link),
                )
            )
            self.target(from_id)
            self.shapes.add(to_id)
        else:
            raise UsageError(f"unknown mutation op {go_quote(m.op)}")

    def upsert(self, m: MutationInput) -> None:
        if not go_trim_space(m.name):
            raise UsageError('upsert_element missing "name"')
        kind = m.kind if go_trim_space(m.kind) else "concept"
        eid = element_id(kind, m.name)
        self.elements[m.name] = eid
        self.mutations.append(
            Mutation(
                op=MutOp.UPSERT_ELEMENT,
                element_id=eid,
                kind=kind,
                name=m.name,
                props=m.props,
            )
        )
        self.upserted.add(eid)
        self.shapes.add(eid)
        # Creating an element is its birth certificate; a bare upsert of an element
        # that already exists only touches it (no phantom conflicts).
        if m.props or eid not in self.projection.graph:
            self.target(eid)


def build_decision(
    inp: DecisionInput, projection: Projection, actor: str
) -> BuiltDecision:
    """Build the decision ``kg ingest`` writes for ``inp`` (``buildDecisionEvent``).

    Args:
        inp: the decoded input.
        projection: the store as it is now (earlier decisions of a batch applied).
        actor: the config actor, the author when the input has none.

    Raises:
        UsageError: a blank or over-long title, a mutation missing a field, an
            unknown op.
    """
    check_title(inp.title)
    builder = _Builder(projection)
    for m in inp.mutations:
        builder.add(m)
    for token in inp.supersedes_on:
        # No implicit upsert here, as upstream: an unknown element becomes a stub.
        _, _, eid = builder.resolve(token)
        if eid:
            builder.target(eid)
    author = inp.author if go_trim_space(inp.author) else actor
    decision = finish_decision(
        projection,
        title=inp.title,
        rationale=inp.rationale,
        author=author,
        refs=refs_string(inp.refs),
        summary=summary_string(inp.mutations),
        mutations=builder.mutations,
        shapes=builder.shapes,
        targets=builder.targets,
    )
    warnings = []
    if not decision.shapes:
        warnings.append(NO_SHAPE_WARNING.format(title=go_quote(inp.title)))
    return BuiltDecision(decision, builder.elements, warnings)
