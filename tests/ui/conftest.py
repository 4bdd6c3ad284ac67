"""Fixtures for the explorer: a fresh demo copy and a deterministic app."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kgai_tui.demo import DEMO_STORE


@pytest.fixture
def demo_store(tmp_path: Path) -> Path:
    """A private copy of the bundled demo store (tests may write into it)."""
    target = tmp_path / "demo-store"
    shutil.copytree(DEMO_STORE, target)
    return target
