"""``kg.config.json``: this install's identity and session settings (spec 1.4).

The file belongs to one machine and is never committed. It is read and written with
the reference engine's rules: Go ``encoding/json`` decoding (keys match fields
case-insensitively, unknown keys are ignored, ``null`` leaves a field unset) and
``MarshalIndent`` with two spaces plus a newline in struct order, mode 0600.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import ConfigError, write_error
from kgai_tui.core.gosem.gojson import marshal_indent
from kgai_tui.core.gosem.gotext import go_fold_key, go_trim_space
from kgai_tui.core.store.install_ids import check_install_id
from kgai_tui.core.store.regular_file import NotRegularError, read_regular

CONFIG_NAME: Final = "kg.config.json"
#: The most bytes of ``kg.config.json`` read (a settings file of a few hundred).
CONFIG_MAX: Final = 16 << 20
SCHEMA_VERSION: Final = 1
_MACHINE_ID_FILES: Final = ("/etc/machine-id", "/var/lib/dbus/machine-id")
# The temporary file is hidden so that a crash between write and rename leaves
# nothing that looks like a store file; it is replaced atomically on the next save.
_TMP_NAME: Final = ".kg.config.json.tmp"


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """The session layer of one install, in the reference's struct order."""

    install_id: str = ""
    actor: str = ""
    remote: str = ""
    prompt: str = ""
    cloud_url: str = ""
    store: str = ""
    cloud_token: str = ""
    schema_version: int = SCHEMA_VERSION
    machine: str = ""
    retired_installs: tuple[str, ...] = ()

    def to_obj(self) -> dict[str, Any]:
        """Build the JSON object in struct order with Go's omitempty rules."""
        out: dict[str, Any] = {"install_id": self.install_id, "actor": self.actor}
        for key in ("remote", "prompt", "cloud_url", "store", "cloud_token"):
            value = getattr(self, key)
            if value:
                out[key] = value
        out["schema_version"] = self.schema_version
        if self.machine:
            out["machine"] = self.machine
        if self.retired_installs:
            out["retired_installs"] = list(self.retired_installs)
        return out

    def to_bytes(self) -> bytes:
        """Return the file's exact bytes (``MarshalIndent`` plus ``\\n``)."""
        return marshal_indent(self.to_obj())


_STR_FIELDS: Final = (
    "install_id",
    "actor",
    "remote",
    "prompt",
    "cloud_url",
    "store",
    "cloud_token",
    "machine",
)
_ALL_FIELDS: Final = (*_STR_FIELDS, "schema_version", "retired_installs")
_FOLD: Final = {go_fold_key(name): name for name in _ALL_FIELDS}


def parse_config(raw: bytes, where: Path) -> StoreConfig:
    """Decode config bytes as Go's ``json.Unmarshal`` into the config struct would.

    Install ids are checked too (``install_id`` when set, every entry of
    ``retired_installs``): an id names a shard file, so ``"../../x"`` in a hand-edited
    or planted config would otherwise make a write create a file outside ``log/``.
    An empty ``install_id`` is the reference's "not minted yet" and stays allowed.

    Raises:
        ConfigError: not JSON, not an object, a field has the wrong type, or an
            install id is not of the install-id shape.
    """
    try:
        pairs = json.loads(raw, object_pairs_hook=lambda kv: kv)
    except ValueError as exc:
        raise ConfigError(f"{where} is not valid JSON: {exc}") from exc
    if not isinstance(pairs, list):
        raise ConfigError(f"{where} is not a JSON object")
    values: dict[str, Any] = {}
    for key, value in pairs:
        name = key if key in _ALL_FIELDS else _FOLD.get(go_fold_key(key))
        if name is None or value is None:
            continue  # unknown keys are ignored; null leaves the field as it was
        if name == "schema_version":
            if type(value) is not int:
                raise ConfigError(f"{where}: schema_version must be an integer")
        elif name == "retired_installs":
            if type(value) is not list or any(type(v) is not str for v in value):
                raise ConfigError(
                    f"{where}: retired_installs must be a list of strings"
                )
            value = tuple(value)
        elif type(value) is not str:
            raise ConfigError(f"{where}: {name} must be a string")
        values[name] = value
    cfg = StoreConfig(**values)
    if cfg.install_id:
        check_install_id(cfg.install_id, f"{where}: install_id")
    for retired in cfg.retired_installs:
        check_install_id(retired, f"{where}: retired_installs")
    if cfg.schema_version == 0:
        cfg = replace(cfg, schema_version=SCHEMA_VERSION)
    return cfg


def load_config(root: Path) -> StoreConfig | None:
    """Read ``<root>/kg.config.json``; ``None`` when the file does not exist.

    Raises:
        ConfigError: the file exists but cannot be decoded.
    """
    path = root / CONFIG_NAME
    try:  # a FIFO there would block the read for ever
        raw = read_regular(path, CONFIG_MAX, follow=True)
    except FileNotFoundError:
        return None
    except NotRegularError as exc:
        raise ConfigError(f"cannot read {path}: it is {exc.strerror}") from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return parse_config(raw, path)


def config_problems(root: Path) -> list[str]:
    """Why ``<root>/kg.config.json`` would refuse a write (``[]`` when it would not).

    Reads never need the config, so a bad one does not stop them; ``doctor`` lists
    this so that the refusal a write would meet is visible before it happens.
    """
    try:
        load_config(root)
    except ConfigError as exc:
        return [str(exc)]
    return []


def save_config(root: Path, cfg: StoreConfig) -> None:
    """Write the config atomically (temp file, fsync, rename) with mode 0600.

    Raises:
        WriteError: the file could not be written; the old file is left as it was.
    """
    tmp = root / _TMP_NAME
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, 0o600)  # the file may hold a cloud token: never wider
            write_all(fd, cfg.to_bytes())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, root / CONFIG_NAME)
        fsync_dir(root)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_error(exc, str(root / CONFIG_NAME)) from exc


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (looping over short writes)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: Path) -> None:
    """Flush a directory entry change (a created or renamed file) to disk."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def mint_install_id() -> str:
    """Return ``i`` + the first 16 hex digits of a random UUIDv4 (no dashes)."""
    return "i" + uuid.uuid4().hex[:16]


def machine_fingerprint() -> str:
    """Return this machine's fingerprint: ``m`` + 16 hex, or ``""`` with no signal.

    ``KGAI_MACHINE`` overrides; otherwise sha256 over the machine id and the host
    name joined by NUL, leaving out missing parts.
    """
    override = os.environ.get("KGAI_MACHINE", "")
    if override:
        return "m" + hashlib.sha256(override.encode("utf-8")).hexdigest()[:16]
    parts: list[str] = []
    for candidate in _MACHINE_ID_FILES:
        try:
            value = go_trim_space(Path(candidate).read_text("utf-8", "replace"))
        except OSError:
            continue
        if value:
            parts.append(value)
            break
    host = socket.gethostname()
    if host:
        parts.append(host)
    if not parts:
        return ""
    return "m" + hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]


def bind_machine(cfg: StoreConfig) -> tuple[StoreConfig, str | None]:
    """Apply the machine binding (spec 1.4): adopt, keep, or rotate the identity.

    A store directory copied to another machine must not keep writing the original
    machine's shard (two writers on one chain would fork it), so a changed
    fingerprint retires the old install id and mints a new one.

    Returns:
        The (possibly new) config and a notice for the user when the identity rotated.
    """
    current = machine_fingerprint()
    if not current or cfg.machine == current:
        return cfg, None
    if not cfg.machine:
        return replace(cfg, machine=current), None
    old = cfg.install_id
    rotated = replace(
        cfg,
        install_id=mint_install_id(),
        machine=current,
        retired_installs=(*cfg.retired_installs, old) if old else cfg.retired_installs,
    )
    notice = (
        f"this store was bound to another machine; install {old} is retired and "
        f"this machine now writes as {rotated.install_id}"
    )
    return rotated, notice


def git_user_name() -> str:
    """Return ``git config user.name`` (trimmed), or ``""`` when git has none."""
    try:
        out = subprocess.run(
            ["git", "config", "user.name"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
            env=git_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return go_trim_space(out.stdout) if out.returncode == 0 else ""


def git_env() -> dict[str, str]:
    """The environment for git subprocesses, without variables that redirect git.

    A ``GIT_DIR`` inherited from a hook would make ``git init`` act on the wrong
    repository.
    """
    env = dict(os.environ)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"):
        env.pop(var, None)
    return env


def choose_actor(explicit: str | None, existing: str) -> str:
    """Pick the actor by the reference's precedence (spec 1.4).

    ``--actor``, then the existing config value, then ``KGAI_ACTOR``, then
    ``git config user.name``, then ``$USER``, then ``"unknown"``.
    """
    if explicit and go_trim_space(explicit):
        return explicit
    if existing:
        return existing
    env_actor = os.environ.get("KGAI_ACTOR", "")
    if env_actor:
        return env_actor
    return git_user_name() or os.environ.get("USER", "") or "unknown"


def ensure_identity(cfg: StoreConfig | None, actor: str | None = None) -> StoreConfig:
    """Complete a config with an install id, an actor and the schema version."""
    base = cfg if cfg is not None else StoreConfig()
    return replace(
        base,
        install_id=base.install_id or mint_install_id(),
        actor=choose_actor(actor, base.actor),
        schema_version=base.schema_version or SCHEMA_VERSION,
    )
