"""The heap helpers: trimming is safe to call at any time, anywhere."""

from __future__ import annotations

import sys

from kgai_tui.core.heap import trim_heap


def test_trim_heap_runs_on_linux_and_is_harmless_twice() -> None:
    blocks = [bytearray(1 << 20) for _ in range(64)]
    del blocks
    first = trim_heap()
    assert trim_heap() == first
    if sys.platform.startswith("linux"):
        assert isinstance(first, bool)
