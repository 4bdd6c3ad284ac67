"""The answers of ``config``, ``prompt`` and ``trust``: kg 1.5's JSON, key for key.

Every object here is what kg prints (a Go map, so the keys are sorted when it is
encoded: :func:`sorted_obj`). The text a person reads is the same JSON, as kg
prints it; ``--raw`` prints a value alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import ConfigError, KgaiError, RefusedError
from kgai_tui.core.store.discovery import StoreLocation, locate_store, project_root
from kgai_tui.core.store.layers import load_layers, project_layer
from kgai_tui.core.store.settings import (
    SETTING_KEYS,
    Layer,
    Settings,
    effective,
    expand_store_path,
)
from kgai_tui.core.store.trust import (
    ack,
    decided_configs,
    dismiss,
    trust,
    trust_state,
    untrust,
)

__all__ = [
    "config_get_obj",
    "config_show_obj",
    "has_events",
    "pending_path",
    "root_or_none",
    "sorted_obj",
    "trust_obj",
]

PENDING_NOTE: Final = (
    "this repo's .kgairc has not been approved on this machine, so it decides nothing "
    "yet — `kgai-tui trust --show` prints what it asks for, `kgai-tui trust` approves it"
)
DISMISSED_NOTE: Final = (
    "this repo's .kgairc was dismissed on this machine (`kgai-tui trust --dismiss`), "
    "so it decides nothing and no longer prompts — `kgai-tui trust` approves it, "
    "`kgai-tui trust --revoke` re-arms the prompt"
)


def sorted_obj(obj: dict[str, Any]) -> dict[str, Any]:
    """A Go map's key order (byte order of the keys)."""
    return {k: obj[k] for k in sorted(obj)}


def has_events(root: Path) -> bool:
    """Whether a store directory holds recorded decisions (a non-empty shard)."""
    try:
        with os.scandir(root / "log") as entries:
            return any(
                e.name.endswith(".ndjson") and e.is_file() and e.stat().st_size > 0
                for e in entries
            )
    except OSError:
        return False


def pending_path(cwd: Path | None = None) -> str:
    """The project's ``.kgairc`` when it waits for approval on this machine, else
    ``""`` (reported by ``status``, every read's JSON and the explorer's header)."""
    try:
        layer = project_layer(project_root(cwd))
    except KgaiError:
        return ""
    return str(layer.path) if layer.pending else ""


def _session(location: StoreLocation | None) -> tuple[Path | None, Settings | None]:
    """The session layer's file and settings (``None``: no store there)."""
    if location is None:
        return None, None
    from kgai_tui.core.store.config_file import load_config

    path = location.root / "kg.config.json"
    cfg = load_config(location.root) if location.exists else None
    if cfg is None:
        return path, None
    return path, Settings(cfg.remote, cfg.prompt, cfg.cloud_url, "")


def _layers(explicit: str | None) -> tuple[list[Layer], StoreLocation | None, str]:
    """The layers, the store they resolve to, and the error resolving it met."""
    project = project_root()
    location: StoreLocation | None = None
    error = ""
    try:
        location = locate_store(explicit)
    except KgaiError as exc:
        error = str(exc)
    try:
        path, settings = _session(location)
        return load_layers(project, path, settings), location, error
    except KgaiError as exc:
        empty = [
            Layer(name, "", False, Settings())
            for name in ("session", "project", "global")
        ]
        return empty, location, error or str(exc)


def config_show_obj(explicit: str | None = None) -> dict[str, Any]:
    """``config`` / ``config show``: every layer, the effective values and their
    sources, the store they resolve to, a pending or dismissed ``.kgairc``."""
    layers, location, error = _layers(explicit)
    obj: dict[str, Any] = {
        "effective": {k: effective(layers, k)[0] for k in sorted(SETTING_KEYS)},
        "layers": [layer.obj() for layer in layers],
        "ok": True,
        "sources": {k: effective(layers, k)[1] for k in sorted(SETTING_KEYS)},
    }
    if location is not None:
        obj["store_root"] = str(location.root)
    if error:
        obj["store_error"] = error
    for layer in layers:
        if layer.inherited_from:
            obj["approval_inherited_from"] = layer.inherited_from
        if layer.pending:
            obj["pending_approval"] = layer.path
            obj["note"] = PENDING_NOTE
        if layer.dismissed:
            obj["dismissed"] = layer.path
            obj["note"] = DISMISSED_NOTE
    return sorted_obj(obj)


def config_get_obj(
    key: str, scope: str | None, explicit: str | None = None
) -> dict[str, Any]:
    """``config get KEY``: the effective value and its layer, or one layer's value.

    Raises:
        UsageError: not a layered key.
    """
    Settings().get(key)  # an unknown key is an error even if nothing loads
    layers, _, _ = _layers(explicit)
    if scope is None:
        value, source = effective(layers, key)
    else:
        layer = next(layer for layer in layers if layer.name == scope)
        value, source = layer.settings.get(key), scope
    obj: dict[str, Any] = {"key": key, "ok": True, "source": source, "value": value}
    for layer in layers:
        if layer.inherited_from:
            obj["approval_inherited_from"] = layer.inherited_from
        if layer.pending:
            obj["pending_approval"] = layer.path
    return sorted_obj(obj)


def root_or_none(explicit: str | None) -> Path | None:
    """The store root the settings resolve to, ``None`` when they cannot."""
    try:
        return locate_store(explicit).root
    except KgaiError:
        return None


# ------------------------------------------------------------------ trust

_IGNORED_NOTE: Final = (
    "these keys are never taken from a committed file and are ignored whether or not "
    "you approve it"
)
_INHERITED_NOTE: Final = (
    "this is the same configuration you already approved there, so it is already in "
    "effect here"
)


def trust_obj(action: str) -> dict[str, Any]:
    """``trust`` and its flags (``action``: ``approve``, ``show``, ``revoke``,
    ``list``, ``ack``, ``dismiss``), on the project's ``.kgairc``.

    Raises:
        RefusedError: nothing there to approve, dismiss or acknowledge.
        ConfigError: a corrupt file, or the approvals file cannot be written.
    """
    project = project_root()
    path = project / ".kgairc"
    if action == "list":
        approved, dismissed = decided_configs()
        obj: dict[str, Any] = {
            "count": len(approved),
            "note": "approval is per CONFIGURATION, not per repo: `paths` says where "
            "each was accepted from, and every repo asking for the same thing is "
            "covered",
            "ok": True,
            "trusted": {fp: _record(r) for fp, r in sorted(approved.items())},
        }
        if dismissed:
            obj["dismissed"] = {fp: _record(r) for fp, r in sorted(dismissed.items())}
            obj["dismissed_count"] = len(dismissed)
        return sorted_obj(obj)
    if action == "ack":
        ack(path)
        return {"acknowledged": True, "ok": True, "path": str(path)}
    if action == "revoke":
        had = untrust(path)
        return {
            "note": "that configuration no longer decides anything on this machine — "
            "including in other repos that asked for the same thing; `kgai-tui trust` "
            "approves it, and it prompts again from the next session",
            "ok": True,
            "path": str(path),
            "revoked": had,
        }
    if action == "dismiss":
        return _dismiss(path)
    return _show_or_approve(project, path, approve=action == "approve")


def _record(rec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if rec.get("approved_at"):
        out["approved_at"] = rec["approved_at"]
    if rec.get("dismissed_at"):
        out["dismissed_at"] = rec["dismissed_at"]
    out["paths"] = sorted(rec.get("paths") or [])
    return out


def _dismiss(path: Path) -> dict[str, Any]:
    layer_settings, exists = _read(path)
    from kgai_tui.core.store.trust import fingerprint

    if not exists or not fingerprint(layer_settings):
        raise RefusedError(
            f"no {path} asking for anything in this repository — there is nothing "
            "to dismiss"
        )
    if trust_state(path).trusted:
        return sorted_obj(
            {
                "already_approved": True,
                "dismissed": False,
                "note": "this configuration is already approved — nothing to dismiss; "
                "`kgai-tui trust --revoke` withdraws it",
                "ok": True,
                "path": str(path),
            }
        )
    dismiss(path)
    return sorted_obj(
        {
            "dismissed": True,
            "note": "the approval prompt is silenced on this machine; this config still "
            "decides nothing until `kgai-tui trust`. A later change to the file asks "
            "again, and `kgai-tui trust --revoke` re-arms the prompt",
            "ok": True,
            "path": str(path),
        }
    )


def _read(path: Path) -> tuple[Settings, bool]:
    from kgai_tui.core.store.settings import read_settings

    return read_settings(path)


def _show_or_approve(project: Path, path: Path, *, approve: bool) -> dict[str, Any]:
    on_file, exists = _read(path)
    if not exists:
        raise RefusedError(
            f"no {path} in this repository — there is nothing to approve"
        )
    asks: dict[str, Any] = {}
    if on_file.prompt:
        asks["prompt"] = on_file.prompt
    if on_file.store:
        try:
            asks["store"] = {
                "resolves_to": str(expand_store_path(on_file.store, project)),
                "value": on_file.store,
            }
        except ConfigError as exc:
            asks["store"] = {"error": str(exc), "value": on_file.store}
    state = trust_state(path)
    obj: dict[str, Any] = {
        "already_approved": state.trusted,
        "asks_for": dict(sorted(asks.items())),
        "ok": True,
        "path": str(path),
    }
    ignored = [
        k for k in SETTING_KEYS if on_file.get(k) and not on_file.only("project").get(k)
    ]
    if ignored:
        obj["ignored_keys"] = ignored
        obj["ignored_note"] = _IGNORED_NOTE
    if state.inherited_from:
        obj["approval_inherited_from"] = state.inherited_from
        obj["inherited_note"] = _INHERITED_NOTE
    if not approve:
        obj["note"] = (
            "run `kgai-tui trust` to approve; until then this file decides nothing"
        )
        return sorted_obj(obj)
    before = root_or_none(None)
    obj["fingerprint"] = trust(path)
    obj["approved"] = True
    obj["note"] = "approved for this machine; any later change to the file asks again"
    after = root_or_none(None)
    if (
        before is not None
        and after is not None
        and after != before
        and has_events(before)
    ):
        obj["previous_store"] = str(before)
        obj["note"] = (
            "approved for this machine. Decisions recorded while this config was not "
            f"yet approved are in the previous store at {before} and are not visible "
            f"from the approved store — to carry them over, copy its log/*.ndjson into "
            f"{after}/log/ and run `kgai-tui rebuild` (docs/config.md). Any later "
            "change to the file asks again."
        )
    return sorted_obj(obj)
