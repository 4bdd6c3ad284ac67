"""kgai-tui: read and steer a team's kgai decision memory."""

from __future__ import annotations

__version__ = "0.1.0"
