"""Keep the developer's own stores and config out of every test."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

FIXTURES = Path(__file__).parent / "fixtures"
GO_VECTORS = FIXTURES / "go-vectors"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point HOME, caches and kgai variables at a temporary directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for var in (
        "KGAI_STORE",
        "KGAI_PROJECT",
        "KGAI_HOME",
        "KGAI_ACTOR",
        "KGAI_MACHINE",
        "KGAI_TUI_NOW",
        "KGAI_TUI_CACHE_DIR",
    ):
        monkeypatch.delenv(var, raising=False)
    yield
