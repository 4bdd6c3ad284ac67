"""Build valid events and shards in tests, with real hashes and decision ids."""

from __future__ import annotations

import marshal
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgai_tui.core.wire.codec import compute_hash, decision_id, marshal_event
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.wire.model import Decision, Event, Mutation


def upsert(kind: str, name: str, **props: str) -> Mutation:
    """An ``upsert_element`` mutation for ``kind:name``."""
    return Mutation(
        op="upsert_element",
        element_id=element_id(kind, name),
        kind=kind,
        name=name,
        props=tuple(sorted(props.items())),
    )


def set_prop(kind: str, name: str, key: str, value: str) -> Mutation:
    """A ``set_prop`` mutation."""
    return Mutation(
        op="set_prop", element_id=element_id(kind, name), key=key, value=value
    )


def link(op: str, src: tuple[str, str], dst: tuple[str, str], kind: str) -> Mutation:
    """An ``add_link`` or ``retire_link`` mutation between two ``(kind, name)`` refs."""
    f, t = element_id(*src), element_id(*dst)
    return Mutation(op=op, element_id=f, from_id=f, to_id=t, link_kind=kind)


def decision(
    title: str,
    mutations: Sequence[Mutation] | None = (),
    *,
    rationale: str = "",
    author: str = "alice",
    supersedes: Iterable[str] = (),
    shapes: Iterable[str] | None = None,
    targets: Iterable[str] | None = None,
    summary: str = "",
    provenance_only: bool | None = None,
) -> Decision:
    """A decision with a correct id; shapes and targets default to the upserts."""
    muts = None if mutations is None else tuple(mutations)
    touched = sorted({m.element_id for m in muts or () if m.element_id})
    shp = tuple(sorted(set(shapes))) if shapes is not None else tuple(touched)
    tgt = tuple(sorted(set(targets))) if targets is not None else shp
    prov = (not tgt) if provenance_only is None else provenance_only
    d = Decision(
        id="",
        title=title,
        rationale=rationale,
        author=author,
        summary=summary,
        supersedes=tuple(sorted(set(supersedes))),
        shapes=shp,
        targets=tgt,
        mutations=muts,
        provenance_only=prov,
    )
    return replace(d, id=decision_id(d))


class ShardWriter:
    """Append events to one writer's shard with a correct parent chain."""

    def __init__(self, install_id: str, actor: str = "alice") -> None:
        """Start an empty shard for ``install_id``."""
        self.install_id = install_id
        self.actor = actor
        self.events: list[Event] = []

    def add(self, d: Decision | None, *, lamport: int, recorded_at: str) -> Event:
        """Append a decision event and return it."""
        parents = (self.events[-1].hash,) if self.events else None
        ev = Event(
            hash="",
            op="assert",
            actor=self.actor,
            install_id=self.install_id,
            lamport=lamport,
            recorded_at=recorded_at,
            parents=parents,
            decision=d,
        )
        ev = replace(ev, hash=compute_hash(ev))
        self.events.append(ev)
        return ev

    def to_bytes(self) -> bytes:
        """The shard file's bytes."""
        return b"".join(marshal_event(ev) + b"\n" for ev in self.events)


def write_store(root: Path, shards: dict[str, bytes]) -> Path:
    """Create ``root/log/<name>`` files from bytes; returns ``root``."""
    log = root / "log"
    log.mkdir(parents=True, exist_ok=True)
    for name, data in shards.items():
        (log / name).write_bytes(data)
    return root


#: Commands without the --json/--text choice.
_NO_TEXT = frozenset({"bench", "import", "mcp", "open", "report"})


def as_person(args: Sequence[str]) -> list[str]:
    """``args`` with ``--text`` when the test reads what a person sees (no ``--json``):
    piped, as in a test, kgai-tui prints JSON the way kg does."""
    words = list(args)
    if not words or words[0] in _NO_TEXT or words[0].startswith("-") or "/" in words[0]:
        return words  # no command word (kgai-tui DIR opens the explorer)
    if "--json" in words or "--text" in words:
        return words
    if "--" in words:
        at = words.index("--")
        return [*words[:at], "--text", *words[at:]]
    return [*words, "--text"]


def meta_written(
    path: Path, key: str, timeout_s: float = 60.0
) -> dict[str, Any] | None:
    """The ``meta`` value ``key`` of the model at ``path`` (the moments' state, the
    per-author steps' bound) once a detached build has written it, polled
    read-only; ``None`` if it never was."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                hit = db.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
            except sqlite3.Error:
                hit = None
            finally:
                db.close()
            if hit is not None:
                state: dict[str, Any] = marshal.loads(hit[0])
                return state
        time.sleep(0.1)
    return None
