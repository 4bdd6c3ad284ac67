"""The only place that reads the wall clock, so tests can fix time."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from kgai_tui.core.gosem.gotext import parse_rfc3339


def now() -> datetime:
    """Return the current UTC time in whole seconds.

    ``KGAI_TUI_NOW`` (RFC3339) fixes the clock, for reproducible tests and demos.
    """
    fixed = os.environ.get("KGAI_TUI_NOW", "")
    if fixed:
        parsed = parse_rfc3339(fixed)
        if parsed is not None:
            return parsed
    return datetime.now(UTC).replace(microsecond=0)
