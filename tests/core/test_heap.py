"""The heap helpers: trimming is safe at any time; big replays end frozen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import ShardWriter, decision, upsert, write_store

from kgai_tui.core.heap import trim_heap


def test_trim_heap_runs_on_linux_and_is_harmless_twice() -> None:
    blocks = [bytearray(1 << 20) for _ in range(64)]
    del blocks
    first = trim_heap()
    assert trim_heap() == first
    if sys.platform.startswith("linux"):
        assert isinstance(first, bool)


#: A child opening a store through its read model on the parallel cold path (both
#: thresholds lowered so a small store takes it), then reporting the collector.
_COLD_MODEL_OPEN = """
import gc, sys
from pathlib import Path
import kgai_tui.core.engine.cold_open as cold_open
import kgai_tui.core.heap as heap
from kgai_tui.core.model.open import open_model

heap.BIG_ENGINE = 1
cold_open.PARALLEL_MIN_BYTES = 0
engine = open_model(Path(sys.argv[1]), Path(sys.argv[2]), background=True)
print(gc.get_freeze_count(), gc.isenabled(), engine.projection.applied_count)
"""


def test_a_cold_model_open_leaves_its_replay_out_of_the_collectors_reach(
    tmp_path: Path,
) -> None:
    """The first answer of a big store replays it with the collector paused; the
    first young collection after it would walk every container the replay made
    (2 s at 1M) unless they are frozen first."""
    shards = {}
    for n, install in enumerate(("i-one", "i-two")):
        w = ShardWriter(install)
        for k in range(20):
            w.add(
                decision(f"d{n}-{k}", [upsert("feature", f"F{n}{k}")]),
                lamport=k + 1,
                recorded_at=f"2026-01-01T00:00:{k:02d}Z",
            )
        shards[f"{install}.ndjson"] = w.to_bytes()
    root = write_store(tmp_path / "store", shards)
    out = subprocess.run(
        [sys.executable, "-c", _COLD_MODEL_OPEN, str(root), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the store opens on the serial path")
    frozen, enabled, applied = int(out[0]), out[1], int(out[2])
    assert applied == 40
    assert enabled == "True"  # collection resumes
    assert frozen > 0, "the replay's containers are still walked by the collector"
