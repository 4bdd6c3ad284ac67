"""``import adr``: record a folder of ADRs through the write path, idempotently.

The folder is scanned (:mod:`kgai_tui.core.onboarding.adr_scan`), planned
(:mod:`kgai_tui.core.onboarding.adr_plan`) and recorded in one :func:`kgai_tui.core.write.writes.record`
batch, so every rule of the write path holds: one lock, everything validated before
the first byte, and a decision whose id is already in the store is not written again.
The id covers title, rationale, author and mutations, so importing an unchanged
folder again writes nothing; an edited record is recorded anew and replaces its
earlier import on its ``adr:`` element.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.model.read import read_store
from kgai_tui.core.onboarding.adr_parse import adr_label
from kgai_tui.core.onboarding.adr_plan import ADR_KIND, PlannedAdr, plan_import
from kgai_tui.core.onboarding.adr_scan import ScanProblem, scan_adrs
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.write.session_engine import release_engine
from kgai_tui.core.write.writes import record

_ALREADY: Final = "decision already recorded (no-op): "


@dataclass(frozen=True, slots=True)
class ImportedAdr:
    """What happened to one ADR."""

    label: str
    file: str
    title: str
    date: str
    author: str
    decision_id: str
    outcome: str  # "recorded", "already recorded" or "would record"
    supersedes: tuple[str, ...]
    amends: tuple[str, ...]
    event_hash: str = ""
    lamport: int = 0

    def to_obj(self) -> dict[str, Any]:
        """The JSON row (fixed key order)."""
        out: dict[str, Any] = {
            "adr": self.label,
            "file": self.file,
            "title": self.title,
            "date": self.date,
            "author": self.author,
            "id": self.decision_id,
            "outcome": self.outcome,
            "supersedes": list(self.supersedes),
            "amends": list(self.amends),
        }
        if self.event_hash:
            out["event_hash"] = self.event_hash
            out["lamport"] = self.lamport
        return out


@dataclass(frozen=True, slots=True)
class ImportResult:
    """The whole import: per-ADR outcomes, skipped files, warnings."""

    directory: str
    dry_run: bool
    adrs: tuple[ImportedAdr, ...]
    skipped: tuple[ScanProblem, ...]
    ignored: tuple[str, ...]
    warnings: tuple[str, ...]

    def count(self, outcome: str) -> int:
        """How many ADRs had this outcome."""
        return sum(1 for a in self.adrs if a.outcome == outcome)

    def to_obj(self) -> dict[str, Any]:
        """``{ok, dry_run, dir, adrs, skipped, ignored, warnings}`` (arrays never null)."""
        return {
            "ok": True,
            "dry_run": self.dry_run,
            "dir": self.directory,
            "adrs": [a.to_obj() for a in self.adrs],
            "skipped": [
                {"file": p.file, "line": p.line, "error": p.message}
                for p in self.skipped
            ],
            "ignored": list(self.ignored),
            "warnings": list(self.warnings),
        }


def _existing_numbers(p: ProjectionView, numbers: set[int]) -> set[int]:
    """Which ADR numbers (linked from the folder) already have an element here."""
    return {n for n in numbers if p.has_element(element_id(ADR_KIND, adr_label(n)))}


def _recorded(root: Path, ids: list[str]) -> set[str]:
    """Which of these decision ids the store holds (a dry run's "already recorded"):
    one lookup each through the read model, not every id of the store."""
    opened = read_store(root)
    try:
        index = opened.projection.dec_index
        return {i for i in ids if i in index}
    finally:
        release_engine(opened)


def _outcome(entry: dict[str, Any], known: set[str], dry_run: bool) -> str:
    if dry_run:
        return "already recorded" if entry["id"] in known else "would record"
    return "recorded" if "event_hash" in entry else "already recorded"


def _row(plan: PlannedAdr, entry: dict[str, Any], outcome: str) -> ImportedAdr:
    return ImportedAdr(
        label=plan.adr.record.label,
        file=plan.adr.file,
        title=plan.adr.record.title,
        date=plan.adr.date,
        author=plan.adr.author,
        decision_id=entry["id"],
        outcome=outcome,
        supersedes=tuple(adr_label(n) for n in sorted(plan.supersedes)),
        amends=tuple(adr_label(n) for n in sorted(plan.amends)),
        event_hash=entry.get("event_hash", ""),
        lamport=int(entry.get("lamport", 0)),
    )


def _source_notes(plans: list[PlannedAdr]) -> list[str]:
    notes = []
    for plan in plans:
        adr = plan.adr
        if not adr.date:
            notes.append(
                f"{adr.file}: no date in the record or in git; recorded with the "
                "time of import"
            )
        elif adr.date_source == "git":
            notes.append(f"{adr.file}: no date in the record; using git's {adr.date}")
    return notes


def import_adrs(
    root: Path,
    directory: Path,
    *,
    dry_run: bool = False,
    mapping: dict[int, tuple[str, ...]] | None = None,
    lock_timeout: float | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> ImportResult:
    """Import the ADRs below ``directory`` into the store at ``root``.

    Raises:
        UsageError: ``directory`` is not a folder; a record the write path refuses.
        StoreNotFoundError, LockTimeoutError, WriteError: as for ``record``.
    """
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory of ADRs")
    scan = scan_adrs(directory)
    linked = {r.target for a in scan.adrs for r in a.record.relations}
    opened = read_store(root)  # let go of before the write (see read_store)
    try:
        existing = _existing_numbers(opened.projection, linked)
    finally:
        release_engine(opened)
    plans, warnings = plan_import(list(scan.adrs), existing, mapping or {})
    warnings = list(scan.notes) + warnings + _source_notes(plans)
    rows: list[ImportedAdr] = []
    if plans:
        payload = json.dumps(
            {"decisions": [p.decision_input() for p in plans]}, ensure_ascii=False
        )
        out = record(
            root,
            payload,
            dry_run=dry_run,
            lock_timeout=lock_timeout,
            on_notice=on_notice or (lambda _: None),
        )
        ids = [str(entry["id"]) for entry in out["decisions"]]
        known = _recorded(root, ids) if dry_run else set()
        for plan, entry in zip(plans, out["decisions"], strict=True):
            rows.append(_row(plan, entry, _outcome(entry, known, dry_run)))
        warnings += [w for w in out.get("warnings", ()) if not w.startswith(_ALREADY)]
    return ImportResult(
        directory=str(directory),
        dry_run=dry_run,
        adrs=tuple(rows),
        skipped=scan.problems,
        ignored=scan.ignored,
        warnings=tuple(warnings),
    )
