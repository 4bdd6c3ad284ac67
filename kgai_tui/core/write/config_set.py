"""``config set`` and ``config unset``: one key written into one settings layer.

The session layer is the store's own ``kg.config.json``, written under the store's
lock as kg writes it; the project and global layers are plain files
(:func:`~kgai_tui.core.store.settings.write_layer`). The answer is ``config
show``'s, with ``previous_store`` when the store moved off recorded decisions.
"""

from __future__ import annotations

from typing import Any

from kgai_tui.core.answers.config import (
    config_show_obj,
    has_events,
    root_or_none,
    sorted_obj,
)
from kgai_tui.core.errors import ConfigError, UsageError
from kgai_tui.core.store.discovery import locate_store, project_root
from kgai_tui.core.store.settings import (
    Settings,
    global_config_path,
    validate_layer_key,
    write_layer,
)

__all__ = ["config_set"]


def config_set(
    scope: str, key: str, value: str, explicit: str | None = None
) -> dict[str, Any]:
    """``config set`` (``value`` ``""``: ``unset``): write one key into one layer,
    then answer as ``config show``, adding ``previous_store`` when the store moved
    off recorded decisions.

    Raises:
        UsageError: the key is unknown or may not be set in that layer, or the
            global ``remote`` is ``none``.
        StoreNotFoundError: setting the session layer of a store that does not exist.
        ConfigError, LockTimeoutError: a layer cannot be read or written.
    """
    validate_layer_key(scope, key)
    Settings().set(key, value)  # an oversized prompt is refused before any write
    before = root_or_none(explicit)
    if scope == "session":
        _set_session(key, value, explicit)
    elif scope == "project":
        write_layer(project_root() / ".kgairc", key, value)
    else:
        if key == "remote" and value == "none":
            raise UsageError(
                '"none" opts a project out of a remote inherited from a broader '
                "layer; the global layer has nothing above it — use `kgai-tui config "
                "unset --global remote`"
            )
        write_layer(global_config_path(), key, value)
    obj = config_show_obj(explicit)
    after = root_or_none(explicit)
    if key == "store" and before is not None and after != before and has_events(before):
        obj["previous_store"] = (
            f"the previous store at {before} still holds recorded decisions — they are "
            f"not visible from this repo any more. To carry them over, copy its "
            f"log/*.ndjson into {after}/log/ and run `kgai-tui rebuild` "
            "(docs/config.md)."
        )
        obj = sorted_obj(obj)
    return obj


def _set_session(key: str, value: str, explicit: str | None) -> None:
    """Write a key of the store's own ``kg.config.json`` under the store's lock."""
    from dataclasses import replace

    from kgai_tui.core.answers.answer import no_store
    from kgai_tui.core.store.config_file import load_config, save_config
    from kgai_tui.core.write.lock import store_lock

    location = locate_store(explicit)
    if not location.exists:
        if not value:
            return  # nothing to unset: no store is created for it
        raise no_store(location)
    with store_lock(location.root):
        cfg = load_config(location.root)
        if cfg is None:
            raise ConfigError(f"no kg.config.json in the store at {location.root}")
        if key == "remote":
            cfg = replace(cfg, remote=value)
        elif key == "prompt":
            cfg = replace(cfg, prompt=value)
        else:
            cfg = replace(cfg, cloud_url=value)
        save_config(location.root, cfg)
