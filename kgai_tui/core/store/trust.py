"""Approving a committed ``.kgairc``: kg's fingerprints and approvals file, shared.

A ``.kgairc`` arrives with a clone, from whoever wrote the repository; its ``store``
chooses a directory that writes go to and its ``prompt`` is injected into agents'
sessions, so it decides nothing until this machine approves what it asks for (the
direnv model, kg 1.5's ``src/internal/store/trust.go``).

What is approved is the settings asked for, not the bytes: the fingerprint is
``sha256:`` and the hex SHA-256 of Go's ``json.Marshal`` of the non-empty values of
the keys the project layer may set (``prompt``, ``store``), keys sorted, Go's
HTML-safe escapes included. Approvals live in ``$KGAI_HOME/trusted.json``, the very
file ``kg trust`` writes, so an approval made by either tool counts for both:
``{fingerprint: {"approved_at"?, "dismissed_at"?, "paths": [...]}}``. A fingerprint
with no record is pending; a record without ``approved_at`` is dismissed (inert,
silenced); with it, approved. Every repository carrying the same configuration is
covered by one approval; one that inherited it says so once (``ack``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import ConfigError, RefusedError
from kgai_tui.core.store.settings import (
    KEY_LAYERS,
    MISSING,
    SETTING_KEYS,
    Settings,
    kgai_home,
    read_json_file,
    read_settings,
)

__all__ = [
    "TrustState",
    "ack",
    "decided_configs",
    "dismiss",
    "fingerprint",
    "fingerprint_of",
    "trust",
    "trust_path",
    "trust_state",
    "untrust",
]

TRUST_FILE: Final = "trusted.json"


def trust_path() -> Path:
    """``$KGAI_HOME/trusted.json``."""
    return kgai_home() / TRUST_FILE


def fingerprint(settings: Settings) -> str:
    """What a committed config asks for, hashed; ``""`` when it asks for nothing."""
    from kgai_tui.core.gosem.gojson import marshal

    asked = {
        k: settings.get(k)
        for k in sorted(SETTING_KEYS)
        if "project" in KEY_LAYERS[k] and settings.get(k)
    }
    if not asked:
        return ""
    return "sha256:" + hashlib.sha256(marshal(asked)).hexdigest()


def fingerprint_of(path: Path) -> str:
    """The fingerprint of the config file at ``path`` (``""``: none, or nothing asked).

    Raises:
        ConfigError: the file is corrupt.
    """
    settings, exists = read_settings(path)
    return fingerprint(settings) if exists else ""


@dataclass(frozen=True, slots=True)
class TrustState:
    """May this config decide anything here?"""

    trusted: bool
    dismissed: bool = False
    inherited_from: str = ""
    fingerprint: str = ""

    @property
    def pending(self) -> bool:
        """Asking for something, neither approved nor dismissed on this machine."""
        return not self.trusted and not self.dismissed


def _load() -> dict[str, dict[str, Any]]:
    path = trust_path()
    data = read_json_file(path)
    if data is MISSING:
        return {}
    if not isinstance(data, dict) or not all(
        isinstance(v, dict) for v in data.values()
    ):
        raise ConfigError(f"corrupt {path}: not a map of approval records")
    return data


def _save(records: dict[str, dict[str, Any]]) -> None:
    """kg's bytes: MarshalIndent (sorted fingerprints, struct order, paths sorted),
    through ``trusted.json.new`` and a rename, mode 0600."""
    from kgai_tui.core.gosem.gojson import marshal_indent

    out: dict[str, Any] = {}
    for fp in sorted(records):
        rec = records[fp]
        row: dict[str, Any] = {}
        if rec.get("approved_at"):
            row["approved_at"] = rec["approved_at"]
        if rec.get("dismissed_at"):
            row["dismissed_at"] = rec["dismissed_at"]
        paths = rec.get("paths")
        row["paths"] = sorted(paths) if isinstance(paths, list) else None
        out[fp] = row
    home = kgai_home()
    try:
        home.mkdir(parents=True, exist_ok=True)
        tmp = home / (TRUST_FILE + ".new")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, marshal_indent(out))
        finally:
            os.close(fd)
        os.replace(tmp, trust_path())
    except OSError as exc:
        raise ConfigError(
            f"cannot write {trust_path()}: {exc.strerror or exc}"
        ) from None


def _abs(path: Path) -> str:
    return os.path.abspath(path)


def trust_state(path: Path) -> TrustState:
    """Whether the config at ``path`` may take effect on this machine.

    Raises:
        ConfigError: the config or the approvals file is corrupt.
    """
    fp = fingerprint_of(path)
    if not fp:
        return TrustState(trusted=True)
    rec = _load().get(fp)
    if rec is None:
        return TrustState(trusted=False, fingerprint=fp)
    if not rec.get("approved_at"):
        return TrustState(trusted=False, dismissed=True, fingerprint=fp)
    paths = rec.get("paths") or []
    inherited = ""
    if _abs(path) not in paths and paths:
        inherited = str(sorted(paths)[0])
    return TrustState(trusted=True, inherited_from=inherited, fingerprint=fp)


def _now() -> str:
    from kgai_tui.core.clock import now
    from kgai_tui.core.gosem.gotext import format_rfc3339

    return format_rfc3339(now())


def _record(fp: str, path: str) -> None:
    records = _load()
    rec = dict(records.get(fp, {}))
    if not rec.get("approved_at"):
        rec["approved_at"] = _now()
    rec.pop("dismissed_at", None)  # approving supersedes a dismissal
    paths = list(rec.get("paths") or [])
    if path not in paths:
        paths.append(path)
    rec["paths"] = paths
    records[fp] = rec
    _save(records)


def trust(path: Path) -> str:
    """Approve what the config at ``path`` asks for; return its fingerprint.

    Raises:
        RefusedError: it asks for nothing that needs approval.
        ConfigError: a file is corrupt or cannot be written.
    """
    fp = fingerprint_of(path)
    if not fp:
        raise RefusedError(f"{path} asks for nothing that needs approval")
    _record(fp, _abs(path))
    return fp


def ack(path: Path) -> None:
    """Record that this repository uses an approval first made elsewhere.

    Raises:
        RefusedError: the config is not approved.
    """
    state = trust_state(path)
    if not state.trusted or not state.fingerprint:
        raise RefusedError(f"{path} is not approved — nothing to acknowledge")
    _record(state.fingerprint, _abs(path))


def dismiss(path: Path) -> str:
    """Silence the pending prompt without approving (an approval is kept as is).

    Raises:
        RefusedError: the config asks for nothing that needs a decision.
    """
    fp = fingerprint_of(path)
    if not fp:
        raise RefusedError(f"{path} asks for nothing that needs a decision")
    records = _load()
    rec = dict(records.get(fp, {}))
    if not rec.get("approved_at"):
        rec["dismissed_at"] = _now()
    paths = list(rec.get("paths") or [])
    if _abs(path) not in paths:
        paths.append(_abs(path))
    rec["paths"] = paths
    records[fp] = rec
    _save(records)
    return fp


def untrust(path: Path) -> bool:
    """Withdraw the approval (or dismissal) of what the config asks for, everywhere;
    whether there was one."""
    fp = fingerprint_of(path)
    records = _load()
    if fp not in records:
        return False
    del records[fp]
    _save(records)
    return True


def decided_configs() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The approved and the dismissed configurations on record."""
    approved: dict[str, dict[str, Any]] = {}
    dismissed: dict[str, dict[str, Any]] = {}
    for fp, rec in _load().items():
        (approved if rec.get("approved_at") else dismissed)[fp] = rec
    return approved, dismissed
