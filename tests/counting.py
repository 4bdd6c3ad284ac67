"""Count the whole-store opens a test makes, to check a read went through the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kgai_tui.core.engine import open as engine_open


def counting_opens(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every store opened whole from now on (``open_engine`` counted), in order."""
    opened: list[Path] = []
    real = engine_open.open_engine

    def counted(root: Path, **kwargs: Any) -> Any:
        opened.append(root)
        return real(root, **kwargs)

    monkeypatch.setattr(engine_open, "open_engine", counted)
    return opened
