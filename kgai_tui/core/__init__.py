"""The headless engine of kgai-tui: wire format, replay and reads (no UI imports).

The public names are loaded lazily (PEP 562) so that importing one submodule does not
import the whole engine.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Engine": "kgai_tui.core.engine.engine",
    "Projection": "kgai_tui.core.replay.projection",
    "Event": "kgai_tui.core.wire.model",
    "Decision": "kgai_tui.core.wire.model",
    "Mutation": "kgai_tui.core.wire.model",
    "KgaiError": "kgai_tui.core.errors",
    "StoreNotFoundError": "kgai_tui.core.errors",
    "UsageError": "kgai_tui.core.errors",
    "NotFoundError": "kgai_tui.core.errors",
    "WriteError": "kgai_tui.core.errors",
    "locate_store": "kgai_tui.core.store.discovery",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kgai_tui.core' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
