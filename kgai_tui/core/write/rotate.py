"""``rotate``: a fresh install identity for a store, as ``kg rotate`` gives one.

The remedy for a store copied on one machine (both copies share an install id and
a machine fingerprint, so only a sync can see the fork): under the store's lock the
current id joins ``retired_installs``, a new one is minted and the machine is
recorded. The old shard stays on disk untouched; the next sync reconciles it and
records again, under the new id, what the remote never received.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kgai_tui.core.errors import ConfigError
from kgai_tui.core.store.config_file import (
    load_config,
    machine_fingerprint,
    mint_install_id,
    save_config,
)
from kgai_tui.core.write.lock import store_lock

__all__ = ["rotate_install"]


def rotate_install(root: Path, lock_timeout: float | None = None) -> tuple[str, str]:
    """Retire the store's install id and mint a new one; return ``(old, new)``.

    Raises:
        ConfigError: no or a corrupt ``kg.config.json``.
        LockTimeoutError: another writer held the lock for the whole wait.
    """
    with store_lock(root, lock_timeout):
        cfg = load_config(root)
        if cfg is None or not cfg.install_id:
            raise ConfigError(f"no install identity in {root / 'kg.config.json'}")
        old, new = cfg.install_id, mint_install_id()
        machine = machine_fingerprint() or cfg.machine
        save_config(
            root,
            replace(
                cfg,
                install_id=new,
                retired_installs=(*cfg.retired_installs, old),
                machine=machine,
            ),
        )
    return old, new
