"""The user cache directory is platformdirs' own, read without importing it.

``cache_base`` answers the plain XDG cases itself (platformdirs' import costs every
process ~14 ms). Caches found at a different path would be rebuilt silently and
the old ones left behind, so every case is checked against platformdirs itself,
the answers it gives itself included.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import platformdirs
import pytest

from kgai_tui.core.store import cache_file

XDG = [None, "", " ", "/x/cache", "/x/cache/", "//x", "rel/cache", "~/cache"]
HOME = [None, "", "/home/u", "/home/u/", "/", "rel"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG is Linux's")
@pytest.mark.parametrize(("xdg", "home"), list(itertools.product(XDG, HOME)))
def test_cache_base_is_platformdirs_own(
    xdg: str | None, home: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same path as ``platformdirs.user_cache_dir("kgai-tui")``, or no fast answer."""
    monkeypatch.delenv("KGAI_TUI_CACHE_DIR", raising=False)
    for name, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    fast = cache_file._xdg_cache_dir()
    if fast is None:
        return  # left to platformdirs: nothing of ours to compare
    assert fast == platformdirs.user_cache_dir("kgai-tui")
    assert str(cache_file.cache_base()) == str(
        Path(platformdirs.user_cache_dir("kgai-tui"))
    )


def test_the_common_cases_are_answered_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path is taken where it matters: a user's ordinary environment."""
    if not sys.platform.startswith("linux"):
        pytest.skip("XDG is Linux's")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/home/u")
    assert cache_file._xdg_cache_dir() == "/home/u/.cache/kgai-tui"
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/tmp/c")
    assert cache_file._xdg_cache_dir() == "/var/tmp/c/kgai-tui"


def test_the_override_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    """``KGAI_TUI_CACHE_DIR`` beats everything else."""
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", "/somewhere/else")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert str(cache_file.cache_base()) == "/somewhere/else"
