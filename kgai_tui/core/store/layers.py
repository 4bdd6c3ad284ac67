"""The three settings layers read together, and the store they point at.

:func:`store_from_layers` is the part of store resolution that settings decide
(an approved project ``store``, then the global one); :func:`load_layers` reads
session, project and global as ``kgai-tui config`` shows them, with the project
file's approval state, the keys it may not set, and the keys nobody knows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kgai_tui.core.store.settings import (
    PROJECT_FILE,
    SETTING_KEYS,
    Layer,
    Settings,
    cap_prompt,
    expand_store_path,
    global_config_path,
    read_settings,
    unknown_keys_in,
)
from kgai_tui.core.store.trust import TrustState, trust_state

__all__ = [
    "ProjectLayer",
    "load_layers",
    "project_config_path",
    "project_layer",
    "store_from_layers",
]


def project_config_path(project: Path) -> Path:
    """``<project>/.kgairc``: exactly there, no walking up (kg's rule)."""
    return project / PROJECT_FILE


@dataclass(frozen=True, slots=True)
class ProjectLayer:
    """The committed ``.kgairc``: what it says, and what this machine lets it decide."""

    path: Path
    exists: bool
    on_file: Settings
    state: TrustState

    @property
    def settings(self) -> Settings:
        """What it decides: nothing until approved, then only its own keys."""
        return self.on_file.only("project") if self.state.trusted else Settings()

    @property
    def pending(self) -> bool:
        """It asks for something and nobody here approved or dismissed it."""
        return self.exists and self.state.pending

    @property
    def ignored(self) -> tuple[str, ...]:
        """Keys it sets that a committed file may not (``remote``, ``cloud_url``)."""
        return tuple(
            k
            for k in SETTING_KEYS
            if self.on_file.get(k) and self.on_file.only("project").get(k) == ""
        )


def project_layer(project: Path) -> ProjectLayer:
    """Read ``<project>/.kgairc`` and its approval state.

    Raises:
        ConfigError: the file or the approvals file is corrupt.
    """
    path = project_config_path(project)
    on_file, exists = read_settings(path)
    state = trust_state(path) if exists else TrustState(trusted=True)
    return ProjectLayer(path, exists, on_file, state)


def store_from_layers(project: Path) -> tuple[Path | None, str]:
    """The store the settings choose: an approved project ``store``, else the
    global one; ``(None, "")`` when neither sets one.

    Raises:
        ConfigError: a corrupt layer, or a ``store`` value refused on expansion
            (never a silent fallback to the default).
    """
    layer = project_layer(project)
    if layer.settings.store:
        return expand_store_path(layer.settings.store, project), "project"
    global_settings, _ = read_settings(global_config_path())
    if global_settings.store:
        return expand_store_path(global_settings.store, project), "global"
    return None, ""


def load_layers(
    project: Path, session_path: Path | None, session: Settings | None
) -> list[Layer]:
    """Session, project and global, as ``config`` shows them (most specific first).

    ``session`` is the store's own settings (``None``: no store; the layer is then
    reported absent at ``session_path``). Prompts are capped as kg caps them; the
    session layer's ``store`` is blanked (it could never take effect there).

    Raises:
        ConfigError: a corrupt layer file.
    """
    own = (session or Settings()).only("session")
    session_layer = Layer(
        "session",
        "" if session_path is None else str(session_path),
        session is not None,
        replace(own, prompt=cap_prompt(own.prompt)),
    )
    project_file = project_layer(project)
    settings = project_file.settings
    project_row = Layer(
        "project",
        str(project_file.path),
        project_file.exists,
        replace(settings, prompt=cap_prompt(settings.prompt)),
        pending=project_file.pending,
        dismissed=project_file.exists and project_file.state.dismissed,
        ignored=project_file.ignored if project_file.exists else (),
        inherited_from=project_file.state.inherited_from,
        unknown=unknown_keys_in(project_file.path) if project_file.exists else (),
    )
    global_path = global_config_path()
    global_settings, global_exists = read_settings(global_path)
    global_row = Layer(
        "global",
        str(global_path),
        global_exists,
        replace(global_settings, prompt=cap_prompt(global_settings.prompt)),
        unknown=unknown_keys_in(global_path) if global_exists else (),
    )
    return [session_layer, project_row, global_row]
