"""What a read answers where there is no store: ``ok``, an empty result, a note.

kg 1.5 answers a read with nothing recorded as an ordinary empty answer, so a
script or an agent reads "nothing recorded yet", never "something went wrong"
(``noStore`` in the reference's ``main.go``). The JSON is a Go map: the command's
empty shape, ``note`` and ``ok``, keys sorted. The note says whether the location
is the per-project default or one that something else (``--store``,
``KGAI_STORE``, a settings layer) says the store lives at, so a shared store that
is not mounted is not mistaken for a project without history.
"""

from __future__ import annotations

from typing import Any, Final

from kgai_tui.core.answers.answer import Answer
from kgai_tui.core.store.discovery import StoreLocation

__all__ = ["EMPTY", "no_store_answer", "no_store_note"]

EMPTY: Final[dict[str, dict[str, Any]]] = {
    "status": {"initialized": False},
    "doctor": {"initialized": False},
    "history": {"decisions": []},
    "heads": {"count": 0, "heads": []},
    "conflicts": {"conflicts": [], "count": 0},
    "context": {"items": [], "omitted": 0, "shown": 0, "total": 0},
    "search": {"hits": []},
    "resolve": {"existed": False},
    "as-of": {"elements": [], "links": []},
    "export": {},
    "rotate": {"rotated": False},
    "rebuild": {"applied": 0},
    "query": {"rows": []},
}
"""Each read's empty answer, by command (kg's, and ``heads`` in the same spirit)."""


def no_store_note(location: StoreLocation) -> str:
    """kg's note for a missing store, with this tool's command names."""
    if location.source == "default":
        return (
            f"no knowledge graph store at {location.root} — nothing recorded for "
            "this project yet. The store is created by `kgai-tui init` (or kg's first "
            "recorded decision)."
        )
    where = {
        "KGAI_STORE": "KGAI_STORE",
        "--store": "--store",
        "project": "the project layer",
        "global": "the global layer",
    }.get(location.source, location.source)
    return (
        f"no knowledge graph store at {location.root}, which is where {where} says "
        "this project's store lives. Either nothing has been recorded there yet, or "
        "that path is not reachable from this machine (a shared store that is not "
        "mounted, a path that does not exist, no permission) — check before "
        "concluding the project has no history."
    )


def no_store_answer(
    command: str, location: StoreLocation, extra: dict[str, Any] | None = None
) -> Answer | None:
    """The empty answer of ``command`` with kg's note, ``None`` when the command
    has none (a write, or a read kg does not answer so)."""
    shape = EMPTY.get(command)
    if shape is None:
        return None
    if command == "status":
        from kgai_tui import __version__

        shape = {**shape, "version": __version__}
    obj = {**shape, **(extra or {}), "note": no_store_note(location), "ok": True}
    return Answer({k: obj[k] for k in sorted(obj)})
