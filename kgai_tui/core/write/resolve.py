"""Ending a conflict: one decision with authority on the element supersedes every head.

Two steps, so a person can read exactly what will be appended before it is:
:func:`plan_resolution` builds the decision without locking or writing (its id,
title, why, author, supersedes, mutations, the shard it goes to), and
:func:`resolve_conflict` appends it, refusing when given the plan and the store
has moved so that the decision would no longer be the one previewed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgai_tui.core import clock
from kgai_tui.core.errors import NotFoundError, RefusedError, UsageError
from kgai_tui.core.interrupts import Interrupted
from kgai_tui.core.reads.kg import find_element
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.replay.projection_view import element_label
from kgai_tui.core.wire.model import Decision, Mutation, MutOp
from kgai_tui.core.write.ingest import BuiltDecision, check_title, finish_decision
from kgai_tui.core.write.writes import (
    Notice,
    WriteSession,
    decision_entry,
    ignore_notice,
    ingest_result,
    stale_cache_notice,
    write_session,
)

if TYPE_CHECKING:
    from kgai_tui.core.write.session_engine import SessionEngine

__all__ = ["ResolutionPlan", "plan_resolution", "resolve_conflict"]


@dataclass(frozen=True, slots=True)
class ResolutionPlan:
    """The decision a resolution would append, and where.

    Attributes:
        decision: the decision, complete (its id, supersedes, mutations, author).
        element_id: the contested element.
        label: the element as ``kind:name``.
        install_id: the writer the line goes to (the store's own install id).
        new_writer: whether that writer has no shard yet (the store gains one).
    """

    decision: Decision
    element_id: str
    label: str
    install_id: str
    new_writer: bool


def plan_resolution(
    root: Path,
    element: str,
    *,
    keep: str | None = None,
    title: str | None = None,
    rationale: str | None = None,
    props: Mapping[str, str] | None = None,
) -> ResolutionPlan:
    """What :func:`resolve_conflict` would append, without locking or writing.

    Raises:
        As :func:`resolve_conflict` (but never a lock or write error).
    """
    _check(keep, title, props)
    with write_session(root, dry_run=True) as session:
        eid, label, decision = _build(session, element, keep, title, rationale, props)
        return ResolutionPlan(
            decision,
            eid,
            label,
            session.config.install_id,
            not session.shard.exists(),
        )


def resolve_conflict(
    root: Path,
    element: str,
    *,
    keep: str | None = None,
    title: str | None = None,
    rationale: str | None = None,
    props: Mapping[str, str] | None = None,
    expect: Decision | None = None,
    lock_timeout: float | None = None,
    on_notice: Notice = ignore_notice,
) -> dict[str, Any]:
    """End a conflict: one decision with authority on the element supersedes every head.

    With ``keep``, the new decision restates the kept decision (its title, its
    rationale plus a line naming the winner and the losers, and its mutations of
    this element, so the element's props and links are the kept side's again).
    Otherwise it records ``title``/``rationale`` (``None`` is empty) and, for each
    of ``props``, a ``set_prop`` of the element (in key order): without props,
    exactly what ``kg ingest`` writes for ``{"title": …, "rationale": …,
    "supersedes_on": ["kind:name"]}``. ``rationale`` is ignored with ``keep``.
    ``element`` is ``kind:name`` or an element id. With ``expect`` (a
    :class:`ResolutionPlan`'s decision), nothing is written unless the decision
    built under the lock is that one, superseding the same heads.
    History keeps both sides; running the command again finds no conflict.

    Returns:
        The 5.5 ingest result for the one new decision.

    Raises:
        UsageError: neither or both of ``keep`` and ``title``; ``keep`` is not a
            head; ``props`` with ``keep``.
        NotFoundError: no such element.
        RefusedError: the element has fewer than two decisions in force, this
            exact resolution is already recorded, or the store moved since the
            plan ``expect`` was made.
        StoreNotFoundError, LockTimeoutError, WriteError, ConfigError,
            Interrupted: as for :func:`~kgai_tui.core.write.writes.record`.
    """
    _check(keep, title, props)
    sessions: list[WriteSession] = []
    try:
        with write_session(
            root, lock_timeout=lock_timeout, on_notice=on_notice
        ) as session:
            sessions.append(session)
            eid, _, decision = _build(session, element, keep, title, rationale, props)
            if expect is not None and (
                decision.id != expect.id or decision.supersedes != expect.supersedes
            ):
                raise RefusedError(
                    "the conflict changed since the preview (another decision was "
                    "recorded); nothing was written: look at it again"
                )
            event = session.stage(decision, clock.now())
            session.commit()
    except Interrupted as exc:
        raise exc.settled(any(s.committed for s in sessions)) from None
    stale_cache_notice(root, on_notice)
    p = session.projection
    name = (p.element(eid) or ("", "", ""))[1]
    built = BuiltDecision(decision, {name or eid: eid})
    return ingest_result(
        [decision_entry(built, event, dry_run=False)], built.elements, [], dry_run=False
    )


def _check(
    keep: str | None, title: str | None, props: Mapping[str, str] | None
) -> None:
    if (keep is None) == (title is None):
        raise UsageError("give exactly one of --keep DECISION_ID or --title TEXT")
    if keep is not None and props:
        raise UsageError("--set goes with --title: a kept side brings its own props")
    if title is not None:
        check_title(title)


def _build(
    session: WriteSession,
    element: str,
    keep: str | None,
    title: str | None,
    rationale: str | None,
    props: Mapping[str, str] | None,
) -> tuple[str, str, Decision]:
    """The element, its label and the resolving decision, on the session's log."""
    p = session.projection
    eid = find_element(p, element)
    if eid not in p.graph:
        raise NotFoundError(f"no element {element!r} in the store at {session.root}")
    label = element_label(p, eid)
    head_ids = [p.dec_id[i] for i in p.heads_of(eid)]
    if len(head_ids) < 2:
        raise RefusedError(
            f"no conflict on {label}: {len(head_ids)} decision(s) in force"
            f"{' (' + head_ids[0] + ')' if head_ids else ''}; nothing to resolve"
        )
    mutations: tuple[Mutation, ...] = ()
    if keep is not None:
        kept_id = _pick_head(keep, head_ids, label)
        kept = _kept_decision(session.engine, kept_id)
        others = ", ".join(h for h in head_ids if h != kept_id)
        note = f"Resolved conflict on {label}: kept {kept_id} over {others}."
        title = kept.title
        rationale = f"{kept.rationale}\n\n{note}" if kept.rationale else note
        mutations = tuple(m for m in kept.mutations or () if m.element_id == eid)
    elif props:
        mutations = tuple(
            Mutation(op=MutOp.SET_PROP, element_id=eid, key=key, value=value)
            for key, value in sorted(props.items())
        )
    assert title is not None
    shapes = {eid} | {m.to_id for m in mutations if m.to_id}
    decision = finish_decision(
        p,
        title=title,
        rationale=rationale or "",
        author=session.config.actor,
        refs="",
        summary=_mutation_summary(p, mutations),
        mutations=mutations,
        shapes=shapes,
        targets={eid},
    )
    if decision.id in p.dec_index:
        raise RefusedError(
            f"this resolution is already recorded as {decision.id}; change the "
            "title or rationale to record another"
        )
    return eid, label, decision


def _pick_head(keep: str, head_ids: list[str], label: str) -> str:
    """Match ``--keep`` against the heads: the full id or a unique prefix."""
    exact = [h for h in head_ids if h == keep]
    matches = exact or [h for h in head_ids if len(keep) >= 4 and h.startswith(keep)]
    if len(matches) == 1:
        return matches[0]
    raise UsageError(
        f"{keep!r} is not {'a unique prefix of ' if matches else ''}one of the "
        f"decisions in force on {label}: {', '.join(head_ids)}"
    )


def _kept_decision(engine: SessionEngine, dec_id: str) -> Decision:
    """The decision record as first applied in canonical order (its own event)."""
    p = engine.projection
    idx = p.dec_index.get(dec_id)
    if idx is not None and p.dec_hash[idx]:
        ev = engine.event_for(p.dec_hash[idx], p.dec_install[idx])
        if ev is not None and ev.decision is not None and ev.decision.id == dec_id:
            return ev.decision
    for ev in engine.events:  # a decision first seen as a placeholder: rare, slow
        if ev.decision is not None and ev.decision.id == dec_id:
            return ev.decision
    raise NotFoundError(f"decision {dec_id} has no event in the log")


def _mutation_summary(projection: Projection, mutations: tuple[Mutation, ...]) -> str:
    """Describe restated mutations in the words of spec 5.6, with element labels."""
    parts: list[str] = []
    for m in mutations:
        if m.op == MutOp.UPSERT_ELEMENT:
            parts.append(f"element {m.name}")
        elif m.op == MutOp.SET_PROP:
            parts.append(f"set {element_label(projection, m.element_id)}.{m.key}")
        elif m.op in (MutOp.ADD_LINK, MutOp.RETIRE_LINK):
            word = "link" if m.op == MutOp.ADD_LINK else "retire"
            parts.append(
                f"{word} {element_label(projection, m.from_id)}-{m.link_kind}->"
                f"{element_label(projection, m.to_id)}"
            )
    return "; ".join(parts)
