"""A store's cache is one directory: ``<cache>/<store key>/`` (issue 40).

Every read and write, through every face, keeps what it derives for a store in that
one directory of the user cache, so deleting it is the whole of "clear the cache"
and nothing of one store lands beside another's. Each command below runs as a real
process with its own ``KGAI_TUI_CACHE_DIR``; after each, the cache holds exactly the
store's directory. Files an earlier release kept elsewhere in the cache for the
store (``engine/<key>.bin``, ``model/<key>.sqlite``, ``search/<key>/``, ...) are
removed when its model is first built, and by ``rebuild``; another store's stay,
and the shards a reconcile kept move into the store's directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from kgai_tui.core.store.cache_file import store_cache_dir, store_key
from kgai_tui.demo import DEMO_STORE

PAYMENTS = "el_7afad531e3f0096a1da2"  # contested in the demo store
DECISION = {
    "decision": {
        "title": "Receipts are kept for ten years",
        "rationale": "Tax law in two of our markets asks for it.",
        "mutations": [{"op": "upsert_element", "kind": "feature", "name": "Receipts"}],
    }
}


def _run(cache: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "KGAI_TUI_CACHE_DIR": str(cache), **env}
    return subprocess.run(
        [sys.executable, "-m", "kgai_tui", *args],
        capture_output=True,
        text=True,
        env=full,
        check=False,
        timeout=180,
    )


def _only_the_store(cache: Path, root: Path) -> None:
    """The cache holds the store's one directory and nothing else."""
    assert sorted(os.listdir(cache)) == [store_key(root)], sorted(os.listdir(cache))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(DEMO_STORE, root)
    return root


def test_every_read_and_write_keeps_to_the_stores_one_directory(
    store: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    at = ["--store", str(store)]
    doc = tmp_path / "decision.json"
    doc.write_text(json.dumps(DECISION))
    commands = [
        ["status", *at, "--json"],
        ["heads", *at, "--json"],
        ["history", PAYMENTS, *at, "--json"],
        ["conflicts", *at, "--json"],
        ["context", "--about", "payments", *at, "--json"],
        ["as-of", "2026-03-01", *at, "--json"],
        ["search", "payments", *at, "--json"],
        ["search", "--as-of", "2026-03-01", "payments", *at, "--json"],
        ["people", *at, "--json"],
        ["people", "--as-of", "2026-03-01", *at, "--json"],
        ["stale", *at, "--json"],
        ["export", "--canonical", *at],
        ["diff", "2026-01-01", "2026-04-01", *at, "--json"],
        ["query", "MATCH (e:Element) RETURN count(e) AS n", *at],
        [
            "query",
            "MATCH (e:Element) RETURN count(e) AS n",
            "--as-of",
            "2026-03-01",
            *at,
        ],
        ["report", *at],
        ["doctor", *at, "--json"],
        ["init", *at],
        ["record", str(doc), *at, "--json"],
        ["resolve-conflict", PAYMENTS, "--keep", "d_7895514f93a5e15d6fd5d6cf", *at],
        ["status", *at, "--json"],  # extends the model after the writes
        ["rebuild", *at],
    ]
    for args in commands:
        done = _run(cache, *args)
        assert done.returncode == 0, (args, done.stderr)
        _only_the_store(cache, store)
    # The whole store (no model): its time index, same place; nothing else of it.
    for args in (["status", *at, "--json"], ["as-of", "2026-03-01", *at, "--json"]):
        done = _run(cache, *args, KGAI_TUI_READ_MODEL="off")
        assert done.returncode == 0, (args, done.stderr)
        _only_the_store(cache, store)
    # Detached builds (the model, its moments, the search index) write late: wait
    # for the store's lock files to settle, then look again.
    time.sleep(1.0)
    _only_the_store(cache, store)
    inside = {p.name for p in store_cache_dir(store, cache).iterdir()}
    assert {"model.sqlite", "engine.time.bin"} <= inside, inside
    assert "engine.bin" not in inside, "no copy of the whole projection is kept"


def test_the_explorer_and_the_mcp_server_keep_to_it_too(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgai_tui.mcp.server import build_server
    from kgai_tui.ui.app import make_app
    from kgai_tui.ui.widgets.time_slider import TimeSlider

    cache = tmp_path / "cache"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))

    async def explore() -> None:
        app = make_app(store, live=False)
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(200):
                if app.snapshot is not None:
                    break
                await pilot.pause(0.05)
            await pilot.press("[")  # the slider's history: the whole store
            slider = app.query_one(TimeSlider)
            for _ in range(400):
                if not slider.loading and app.cursor is not None:
                    break
                await pilot.pause(0.05)
            assert app.cursor is not None
            await pilot.press("q")

    anyio.run(explore)
    _only_the_store(cache, store)

    server = build_server(str(store))
    for tool, arguments in (
        ("recall", {"topic": "payments"}),
        ("search", {"query": "payments"}),
        ("query", {"cypher": "MATCH (e:Element) RETURN count(e) AS n"}),
    ):
        anyio.run(server.call_tool, tool, arguments)
        _only_the_store(cache, store)


def test_an_earlier_releases_files_go_when_the_model_is_built(
    store: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    key, other = store_key(store), "0" * 32
    planted = [
        cache / "engine" / f"{key}.bin",
        cache / "engine" / f"{key}.time.bin",
        cache / "model" / f"{key}.sqlite",
        cache / "model" / f"{key}.sqlite.seal",
        cache / "model" / f"{key}.sqlite.recall" / "seg-1.bin",
        cache / "prints" / f"{key}.json",
        cache / "search" / key / "state.json",
        cache / "sync" / f"{key}.counts",
        # The whole projection the store's own directory held before the model
        # became the one store derived from the log.
        store_cache_dir(store, cache) / "engine.bin",
    ]
    theirs = [cache / "engine" / f"{other}.bin", cache / "search" / other / "x"]
    # A shard a reconcile kept: the only copy of lines a remote replaced.
    kept = cache / "retired" / key / "igen0001.20260101T000000Z.ndjson"
    for path in [*planted, *theirs, kept]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"from an earlier release")
    done = _run(cache, "status", "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 60
    while any(p.exists() for p in planted) and time.monotonic() < deadline:
        time.sleep(0.1)  # the model may be built by a detached child
    assert [p for p in planted if p.exists()] == []
    assert all(p.exists() for p in theirs)
    moved = store_cache_dir(store, cache) / "retired" / kept.name
    assert moved.read_bytes() == b"from an earlier release"
    assert not kept.parent.exists()
    # rebuild removes them too, and leaves the model with its time index.
    for again in (planted[0], planted[-1]):
        again.write_bytes(b"again")
    done = _run(cache, "rebuild", "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert not planted[0].exists() and all(p.exists() for p in theirs)
    assert not planted[-1].exists()
    assert (store_cache_dir(store, cache) / "engine.time.bin").is_file()
