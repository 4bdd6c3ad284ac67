"""The sync remote as the reference keeps it (spec 1.4, 1.7, 7.6): show it, set it.

``remote`` lives in the session layer (``kg.config.json``, written by
:func:`~kgai_tui.core.store.config_file.save_config` under the store lock, byte for
byte as ``kg`` writes it) and in the global layer (``$KGAI_HOME/config.json``,
read only here). The first non-empty value wins; ``none`` disables syncing;
``{project}`` becomes the project directory's name. ``.kgairc`` is never consulted:
a repository must not choose where its decisions are uploaded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.reads.health import redact
from kgai_tui.core.store.config_file import (
    bind_machine,
    ensure_identity,
    load_config,
    save_config,
)
from kgai_tui.core.store.discovery import project_root
from kgai_tui.core.store.settings import global_remote
from kgai_tui.core.write.lock import store_lock
from kgai_tui.sync.s3_protocol import parse_s3_url
from kgai_tui.sync.sync import effective_remote

__all__ = [
    "RemoteView",
    "check_remote",
    "global_remote",
    "is_s3",
    "remote_view",
    "resolve_remote",
    "set_session_remote",
]

DISABLED: Final = "none"


def is_s3(url: str) -> bool:
    """Whether ``url`` selects the S3 transport (spec 7, step 1)."""
    return url.startswith("s3://")


def resolve_remote(explicit: str | None, session: str) -> tuple[str, str]:
    """``(url, source)``: ``--remote``, then session, then global (spec 7.6).

    ``source`` is ``flag``, ``session``, ``global``, ``disabled`` or ``""``.
    """
    for value, source in ((explicit, "flag"), (session, "session")):
        if value is not None and value.strip():
            return _expand(value.strip(), source)
    value = global_remote().strip()
    return _expand(value, "global") if value else ("", "")


def _expand(value: str, source: str) -> tuple[str, str]:
    if value == DISABLED:
        return "", "disabled"
    if "{project}" in value:
        value = value.replace("{project}", project_root().name)
    return value, source


def check_remote(value: str) -> str:
    """Refuse a remote that no sync could use (the value stays as given).

    Raises:
        UsageError: empty; a bad ``s3://`` URL; a URL git would read as an option
            or that runs a command (``ext::``, ``fd::``).
    """
    value = value.strip()
    if not value:
        raise UsageError("an empty remote; give a URL, or `none` to disable syncing")
    if value == DISABLED or value.startswith("kgai://"):
        return value
    expanded = value.replace("{project}", "project")
    if is_s3(expanded):
        parse_s3_url(expanded)
    else:
        effective_remote(expanded, "")  # the git transport's own refusals
    return value


@dataclass(frozen=True, slots=True)
class RemoteView:
    """Every layer's ``remote`` and the one in effect (``kg remote``'s shape)."""

    session: str
    global_: str
    effective: str
    source: str

    def to_obj(self) -> dict[str, Any]:
        """``{effective, global, ok, project, session, source}`` (a Go map)."""
        return {
            "effective": redact(self.effective),
            "global": redact(self.global_),
            "ok": True,
            "project": "",
            "session": redact(self.session),
            "source": self.source,
        }


def remote_view(root: Path | None) -> RemoteView:
    """The remote of the store at ``root`` (``None``: no store, the global layer)."""
    cfg = load_config(root) if root is not None else None
    session = cfg.remote if cfg is not None else ""
    url, source = resolve_remote(None, session)
    return RemoteView(session, global_remote(), url, source)


def set_session_remote(
    root: Path, value: str | None, *, lock_timeout: float | None = None
) -> str | None:
    """Set (or with ``None`` clear) ``remote`` in ``kg.config.json``, under the lock.

    The config is re-read under the lock, completed and bound to this machine as
    every locked write does, so a rotation in between is never undone.

    Returns:
        A notice when the machine binding rotated the identity, else ``None``.

    Raises:
        UsageError: an unusable remote (:func:`check_remote`).
        ConfigError, WriteError, LockTimeoutError: the config could not be written.
    """
    wanted = "" if value is None else check_remote(value)
    with store_lock(root, lock_timeout):
        loaded = load_config(root)
        cfg = (
            loaded
            if loaded is not None and loaded.install_id
            else ensure_identity(loaded)
        )
        cfg, notice = bind_machine(cfg)
        cfg = replace(cfg, remote=wanted)
        if cfg != loaded:
            save_config(root, cfg)
    return notice
