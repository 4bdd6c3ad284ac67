"""Fixtures for the explorer: a fresh demo copy, and no remembered preferences."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kgai_tui.demo import DEMO_STORE
from kgai_tui.ui import preferences


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The explorer's preferences live in a fresh directory (on every platform)."""
    target = tmp_path / "kgai-tui-config"
    monkeypatch.setattr(preferences, "config_dir", lambda: target)
    return target


@pytest.fixture
def demo_store(tmp_path: Path) -> Path:
    """A private copy of the bundled demo store (tests may write into it)."""
    target = tmp_path / "demo-store"
    shutil.copytree(DEMO_STORE, target)
    return target
