"""kg's layered settings: session, project (``.kgairc``), global (``config.json``).

The same four keys are read from three files and resolved most specific first
(session > project > global; every key overrides, nothing merges), as kg 1.5 does
(``src/internal/store/settings.go`` of the reference):

==========  ==========================  =========================================
layer       file                        may set
==========  ==========================  =========================================
session     ``<store>/kg.config.json``  ``prompt``, ``remote``, ``cloud_url``
project     ``<project>/.kgairc``       ``prompt``, ``store`` (once approved)
global      ``$KGAI_HOME/config.json``  ``prompt``, ``remote``, ``store``
==========  ==========================  =========================================

A key in a layer that may not set it is refused on write and ignored on read. The
project file arrives with a clone, so it decides nothing until this machine approves
what it asks for (:mod:`kgai_tui.core.store.trust`). A corrupt file, an unset
``${VAR}``, or a ``store`` that resolves to the home directory, the repository root
or somebody else's files is a loud one-line error, never a silent fallback.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import ConfigError, UsageError

__all__ = [
    "KEY_LAYERS",
    "LAYERS",
    "MISSING",
    "PROJECT_FILE",
    "PROMPT_MAX_BYTES",
    "SETTING_KEYS",
    "Layer",
    "Settings",
    "cap_prompt",
    "effective",
    "expand_store_path",
    "global_config_path",
    "global_remote",
    "kgai_home",
    "read_json_file",
    "read_settings",
    "unknown_keys_in",
    "validate_layer_key",
    "write_layer",
]

SETTING_KEYS: Final = ("remote", "prompt", "cloud_url", "store")
"""The layered keys, in the order ``config`` prints them."""
LAYERS: Final = ("session", "project", "global")
"""The layers, most specific first: this order is the precedence."""
KEY_LAYERS: Final[dict[str, tuple[str, ...]]] = {
    "prompt": ("session", "project", "global"),
    "store": ("project", "global"),
    "remote": ("session", "global"),
    "cloud_url": ("session",),
}
"""Where each key may be set (enforced on write and on read)."""
PROJECT_FILE: Final = ".kgairc"
PROMPT_MAX_BYTES: Final = 8000
_TRUNCATED: Final = (
    f"\n[truncated at {PROMPT_MAX_BYTES} bytes — keep capture rules short; link out "
    "for detail]"
)


@dataclass(frozen=True, slots=True)
class Settings:
    """The layered keys one file holds (``""``: unset)."""

    remote: str = ""
    prompt: str = ""
    cloud_url: str = ""
    store: str = ""

    def get(self, key: str) -> str:
        """One key's value.

        Raises:
            UsageError: not a layered key.
        """
        if key not in SETTING_KEYS:
            raise unknown_key(key)
        return str(getattr(self, key))

    def set(self, key: str, value: str) -> Settings:
        """A copy with ``key`` set (``""`` clears it).

        Raises:
            UsageError: not a layered key, or a prompt over 8000 bytes.
        """
        if key not in SETTING_KEYS:
            raise unknown_key(key)
        if key == "prompt" and len(value.encode("utf-8")) > PROMPT_MAX_BYTES:
            raise UsageError(
                f"prompt is {len(value.encode('utf-8'))} bytes, limit is "
                f"{PROMPT_MAX_BYTES}: it is injected into every session, so keep it "
                "to the rules themselves and link out for detail"
            )
        return replace(self, **{key: value})

    def only(self, layer: str) -> Settings:
        """A copy keeping only the keys ``layer`` may set."""
        return Settings(
            **{k: (self.get(k) if layer in KEY_LAYERS[k] else "") for k in SETTING_KEYS}
        )


@dataclass(frozen=True, slots=True)
class Layer:
    """One configuration file and what it holds (kg's ``config show`` row)."""

    name: str
    path: str
    exists: bool
    settings: Settings
    pending: bool = False
    dismissed: bool = False
    ignored: tuple[str, ...] = ()
    inherited_from: str = ""
    unknown: tuple[str, ...] = field(default=())

    def obj(self) -> dict[str, object]:
        """kg's JSON for the layer (struct order, omitempty)."""
        settings = {k: self.settings.get(k) for k in SETTING_KEYS}
        out: dict[str, object] = {
            "layer": self.name,
            "path": self.path,
            "exists": self.exists,
            "settings": {k: v for k, v in settings.items() if v},
        }
        if self.pending:
            out["pending_approval"] = True
        if self.dismissed:
            out["dismissed"] = True
        if self.ignored:
            out["ignored_keys"] = list(self.ignored)
        if self.inherited_from:
            out["approval_inherited_from"] = self.inherited_from
        if self.unknown:
            out["unknown_keys"] = list(self.unknown)
        return out


def unknown_key(key: str) -> UsageError:
    """kg's error for a key that is not a layered one."""
    return UsageError(
        f"unknown setting {json.dumps(key)} — valid keys: {', '.join(SETTING_KEYS)}"
    )


def kgai_home() -> Path:
    """``$KGAI_HOME``, or ``~/.kgai``: where the global layer and approvals live."""
    value = os.environ.get("KGAI_HOME", "")
    return Path(value) if value else Path.home() / ".kgai"


def global_config_path() -> Path:
    """The global layer's file."""
    return kgai_home() / "config.json"


def global_remote() -> str:
    """``remote`` of the global layer, or ``""`` (also when the file cannot be
    read: a sync then uses the store's own remote; ``config`` reports the file)."""
    try:
        return read_settings(global_config_path())[0].remote
    except ConfigError:
        return ""


def validate_layer_key(layer: str, key: str) -> None:
    """Refuse ``key`` in a layer where it cannot mean anything (kg's messages).

    Raises:
        UsageError: an unknown key, or one this layer may not set.
    """
    if key not in KEY_LAYERS:
        raise unknown_key(key)
    if layer in KEY_LAYERS[key]:
        return
    if key == "store":
        raise UsageError(
            "`store` cannot be set in the session layer — that file lives inside the "
            "store it would point at; use --project (committed, for everyone who "
            "clones the repo) or --global (this machine)"
        )
    if key == "remote":
        raise UsageError(
            "`remote` cannot be set in the project layer — syncing belongs to the "
            "store, not to one repository (several repos can share one store, and one "
            "log cannot push to several remotes). Set it for this store with "
            "`kgai-tui remote <url>`, or machine-wide with `kgai-tui remote --global "
            "<url>`"
        )
    if key == "cloud_url":
        raise UsageError(
            "`cloud_url` is install-local — it is the address your cloud token "
            "authenticates against, so it stays beside the token in this store's "
            "config. Set it with `kgai-tui config set cloud_url <url>` (session layer)"
        )
    raise UsageError(
        f"`{key}` cannot be set in the {layer} layer — allowed: "
        + ", ".join(KEY_LAYERS[key])
    )


def _field(name: str) -> str | None:
    """The layered key a JSON object key fills, as Go's decoder matches a struct
    tag: exactly, else by Go's case folding (spec 2.8)."""
    from kgai_tui.core.gosem.gotext import go_fold_key

    if name in SETTING_KEYS:
        return name
    folded = go_fold_key(name)
    for key in SETTING_KEYS:
        if go_fold_key(key) == folded:
            return key
    return None


#: What :func:`read_json_file` returns for a file that is not there.
MISSING: Final = object()
#: A settings or approvals file is a few hundred bytes; anything past this is not one.
_JSON_FILE_MAX: Final = 1 << 20


def read_json_file(path: Path) -> Any:
    """The JSON value of a small settings-like file, or :data:`MISSING`.

    The file may be a symlink (dotfile managers make them) but must end at a regular
    file of at most 1 MiB: a committed ``.kgairc`` pointing at ``/dev/zero`` or a
    FIFO would otherwise exhaust memory or block every command.

    Raises:
        ConfigError: unreadable, not a regular file, too large, or not JSON
            (``cannot read <path>: …`` / ``corrupt <path>: …``, as kg says).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"cannot read {path}: not a regular file")
        if st.st_size > _JSON_FILE_MAX:
            raise ConfigError(f"cannot read {path}: larger than {_JSON_FILE_MAX} bytes")
        raw = os.read(fd, _JSON_FILE_MAX + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"corrupt {path}: {exc}") from None


def read_settings(path: Path) -> tuple[Settings, bool]:
    """The settings a layer file holds, and whether it exists (unknown keys pass).

    Raises:
        ConfigError: the file is unreadable, not a JSON object, or sets a key to a
            value that is not a string (``corrupt <path>: …``, as kg says).
    """
    data = read_json_file(path)
    if data is MISSING:
        return Settings(), False
    if not isinstance(data, dict):
        raise ConfigError(f"corrupt {path}: the file is not a JSON object")
    values: dict[str, str] = {}
    for name, value in data.items():
        key = _field(name)
        if key is None:
            continue
        if value is None:
            continue  # Go leaves the field as it was
        if not isinstance(value, str):
            kind = type(value).__name__
            raise ConfigError(
                f"corrupt {path}: {json.dumps(name)} is a {kind}, not a string"
            )
        values[key] = value
    return Settings(**values), True


def unknown_keys_in(path: Path) -> tuple[str, ...]:
    """The keys a layer file holds that are not layered keys (``_`` annotations
    skipped), sorted: a typo like ``stor`` must not do nothing quietly."""
    try:
        data = read_json_file(path)
    except ConfigError:
        return ()
    if not isinstance(data, dict):
        return ()
    return tuple(
        sorted(k for k in data if not k.startswith("_") and k not in KEY_LAYERS)
    )


def cap_prompt(prompt: str) -> str:
    """A prompt cut at 8000 bytes on a UTF-8 boundary, with kg's note, when longer:
    a hand-written file never passes the write-side check."""
    data = prompt.encode("utf-8")
    if len(data) <= PROMPT_MAX_BYTES:
        return prompt
    return data[:PROMPT_MAX_BYTES].decode("utf-8", "ignore") + _TRUNCATED


def effective(layers: list[Layer], key: str) -> tuple[str, str]:
    """``(value, layer)`` of a key across the layers; ``("", "")`` when unset."""
    for layer in layers:
        value = layer.settings.get(key)
        if value:
            return value, layer.name
    return "", ""


_VAR: Final = re.compile(r"\$(?:\{([^}]*)\}|([A-Za-z0-9_]+))")


def _expand_vars(value: str) -> tuple[str, list[str]]:
    """Go's ``os.Expand`` with a lookup that records unset variables."""
    missing: list[str] = []

    def one(m: re.Match[str]) -> str:
        name = m.group(1) if m.group(1) is not None else m.group(2)
        if name in os.environ:
            return os.environ[name]
        missing.append(name)
        return ""

    return _VAR.sub(one, value), missing


def _resolve_existing(path: Path) -> Path:
    """``path`` with symlinks resolved in its deepest existing ancestor."""
    probe = path
    while True:
        if probe.exists():
            resolved = probe.resolve()
            rest = path.relative_to(probe) if probe != path else Path()
            return Path(os.path.normpath(resolved / rest))
        if probe.parent == probe:
            return path
        probe = probe.parent


def expand_store_path(value: str, project: Path) -> Path:
    """Resolve a configured ``store`` (spec 1.8): ``${VAR}``, ``~``, relative to the
    project root; refuse what would turn a misconfiguration into damage.

    Raises:
        ConfigError: empty, an unset variable, no home for ``~``, the home
            directory, the repository root, or a directory holding other files.
    """
    raw = value
    if not value:
        raise ConfigError("`store` is set to an empty value")
    value, missing = _expand_vars(value)
    if missing:
        raise ConfigError(
            f"`store` is {json.dumps(raw)} but ${', $'.join(missing)} is not set on "
            "this machine — set it, or use a path that does not depend on the "
            "environment"
        )
    if value == "~" or value.startswith("~/"):
        home = os.environ.get("HOME", "")
        if not home:
            raise ConfigError(
                f"`store` is {json.dumps(raw)} but this machine has no home directory"
            )
        value = os.path.join(home, value[2:] if value.startswith("~/") else "")
    if not os.path.isabs(value):
        value = os.path.join(str(project), value)
    cleaned = Path(os.path.normpath(value))
    resolved = _resolve_existing(cleaned)
    home = os.environ.get("HOME", "")
    if home and resolved == Path(os.path.normpath(home)):
        raise ConfigError(
            f"`store` resolves to your home directory ({resolved}) — the store owns "
            "the directory it lives in (it git-inits it and writes .gitignore), so it "
            "needs one of its own"
        )
    if resolved == _resolve_existing(Path(os.path.normpath(project))):
        raise ConfigError(
            f"`store` resolves to the repository root ({resolved}) — the store owns "
            "the directory it lives in and would overwrite this repo's .gitignore; "
            "point it at a directory of its own"
        )
    _check_usable(resolved)
    return cleaned


def _check_usable(directory: Path) -> None:
    """Refuse a directory with somebody else's files (no ``kg.config.json``)."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return  # not there yet: the normal first run
    if (directory / "kg.config.json").exists():
        return
    for name in names:
        if name in ("log", ".kg.lock") or name.startswith("graph.kuzu"):
            continue
        raise ConfigError(
            f"`store` points at {directory}, which already contains other files "
            f"({name}…) — the store writes .gitignore/.gitattributes and git-inits "
            "its root, so it needs an empty directory or an existing kgai store"
        )


def write_layer(path: Path, key: str, value: str) -> None:
    """Write one key into a project or global layer file (``""`` deletes it),
    keeping every other key the file holds (a ``_comment``, a newer version's key):
    Go's ``MarshalIndent`` of the merged object, sorted keys, mode 0644.

    Raises:
        UsageError: an unknown key or an oversized prompt.
        ConfigError: the file is corrupt or cannot be written.
    """
    from kgai_tui.core.gosem.gojson import marshal_indent

    current, exists = read_settings(path)
    updated = current.set(key, value)
    merged: dict[str, object] = {}
    if exists:
        merged = dict(read_json_file(path))  # an object: read_settings checked it
    for name in list(merged):
        if _field(name) is not None:
            del merged[name]
    for k in SETTING_KEYS:
        if updated.get(k):
            merged[k] = updated.get(k)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".new")
        tmp.write_bytes(marshal_indent(dict(sorted(merged.items()))))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
