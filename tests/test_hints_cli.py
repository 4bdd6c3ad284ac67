"""Recall hints where people and agents meet them (issue 20): ``kgai-tui context``
(JSON and text), the same bytes whatever the hash seed, the cache and the shard
layout, and the explorer's agent and search views ("did you mean")."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from builders import ShardWriter, as_person, decision, set_prop, upsert, write_store
from textual.pilot import Pilot
from textual.widgets import Input, Static

from kgai_tui.core.wire.ids import element_id
from kgai_tui.demo import DEMO_STORE
from kgai_tui.ui import preferences
from kgai_tui.ui.app import make_app
from kgai_tui.ui.views.agent import AgentScreen, did_you_mean

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")
# A missed phrasing each: a near word, initials, a word of the props, nothing near.
TOPICS = ["message queue", "content delivery network", "uptime targets", "zzzz qqqq"]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    return target


def run(*args: str, env: dict[str, str] | None = None) -> bytes:
    done = subprocess.run(
        [KGAI_TUI, *as_person(args)],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=True,
    )
    assert done.stderr == b""
    return done.stdout


def test_context_json_carries_hints_after_the_kg_keys(store: Path) -> None:
    out = json.loads(
        run("context", "--about", "message queue", "--json", "--store", str(store))
    )
    assert list(out) == ["ok", "items", "shown", "omitted", "total", "hints"]
    assert out["hints"][0]["name"] == "EventBus"
    retry = json.loads(
        run("context", "--about", "EventBus", "--json", "--store", str(store))
    )
    assert retry["items"][0]["name"] == "EventBus"
    assert "hints" not in retry


def test_context_text_says_did_you_mean(store: Path) -> None:
    text = run("context", "--about", "message queue", "--store", str(store)).decode()
    assert "did you mean: EventBus (infra)" in text
    assert "retry with --about EventBus: " in text
    none = run("context", "--about", "zzzz qqqq", "--store", str(store)).decode()
    assert "no hint: nothing in the store is near these words" in none


def test_hints_are_the_same_bytes_across_seeds_caches_and_layouts(
    store: Path, tmp_path: Path
) -> None:
    """PYTHONHASHSEED, a cold and a warm model, no model, and resplit shards."""
    other = tmp_path / "other"
    (other / "log").mkdir(parents=True)
    shutil.copy(store / "kg.config.json", other / "kg.config.json")
    lines = b"".join(
        (store / "log" / name).read_bytes()
        for name in sorted(os.listdir(store / "log"), reverse=True)
    ).splitlines(keepends=True)
    (other / "log" / "z-first.ndjson").write_bytes(b"".join(lines[::2]))
    (other / "log" / "a-second.ndjson").write_bytes(b"".join(lines[1::2]))
    for about in TOPICS:
        answers = set()
        for seed, cache, root in [
            ("0", "c1", store),  # cold model
            ("1", "c1", store),  # warm model
            ("random", "c2", store),
            ("4242", "c3", other),
        ]:
            env = {
                "PYTHONHASHSEED": seed,
                "KGAI_TUI_CACHE_DIR": str(tmp_path / cache),
            }
            answers.add(
                run(
                    "context", "--about", about, "--json", "--store", str(root), env=env
                )
            )
        assert len(answers) == 1, about
        assert b'"hints"' in answers.pop()


def test_tied_crowd_hints_are_the_same_bytes_across_seeds_and_shards(
    tmp_path: Path,
) -> None:
    """The worst case in small: 40 elements tied on one word, 10 unnamed ones above
    them, decisions of 4 elements and two writers sharing lamports, so the element
    id settles the cut. Every seed, cache and shard layout prints the same bytes,
    and the hints are the 8 named elements of lamport 5 in id order."""
    writers = [ShardWriter("i-a"), ShardWriter("i-b")]
    for n in range(10):
        muts = [upsert("feature", f"Item{4 * n + k}", note="ledgers") for k in range(4)]
        muts.append(set_prop("feature", f"Ghost{n}", "note", "ledger"))
        writers[n % 2].add(
            decision(f"batch {n}", muts),
            lamport=n // 2 + 1,
            recorded_at=f"2026-03-{1 + n:02d}T10:00:00Z",
        )
    one = write_store(
        tmp_path / "one",
        {"a.ndjson": writers[0].to_bytes(), "b.ndjson": writers[1].to_bytes()},
    )
    # The same events in other shards: interleaved, the later writer's first.
    lines = (writers[1].to_bytes() + writers[0].to_bytes()).splitlines(keepends=True)
    two = write_store(
        tmp_path / "two",
        {
            "z-first.ndjson": b"".join(lines[::2]),
            "a-second.ndjson": b"".join(lines[1::2]),
        },
    )
    about = "ledger zzzz qqqq"
    answers = set()
    for seed, cache, root in [
        ("0", "c1", one),  # cold model
        ("1", "c1", one),  # warm model
        ("random", "c2", one),
        ("4242", "c3", two),
    ]:
        env = {"PYTHONHASHSEED": seed, "KGAI_TUI_CACHE_DIR": str(tmp_path / cache)}
        answers.add(
            run("context", "--about", about, "--json", "--store", str(root), env=env)
        )
    assert len(answers) == 1
    out = json.loads(answers.pop())
    assert out["total"] == 0
    want = sorted(
        element_id("feature", f"Item{k}") for k in range(32, 40)
    )  # decisions 8 and 9: lamport 5, one per writer
    assert [h["element_id"] for h in out["hints"]] == want


def test_the_agent_view_shows_the_did_you_mean_line(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preferences, "config_dir", lambda: tmp_path / "config")
    app = make_app(store, live=False)
    seen: dict[str, str] = {}

    async def settle(pilot: Pilot[None]) -> None:
        for _ in range(3):
            await pilot.pause()
            await pilot.app.workers.wait_for_complete()
            await pilot.app.screen.workers.wait_for_complete()
        await pilot.pause()

    async def steps(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("3", "A")  # from the Timeline: no element's paths
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AgentScreen)
        seen["none"] = screen.hints_line
        await pilot.press("tab", *"message queue")
        await settle(pilot)
        seen["line"] = screen.hints_line
        seen["payload"] = screen.payload

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await steps(pilot)

    asyncio.run(main())
    assert seen["none"] == ""
    assert seen["line"] == did_you_mean(seen["payload"])
    assert seen["line"].startswith("did you mean: EventBus (infra)")
    assert seen["payload"].encode() == run(
        "context", "--store", str(store), "--about", "message queue", "--json"
    )


def test_the_search_view_suggests_names_when_search_finds_little(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preferences, "config_dir", lambda: tmp_path / "config")
    app = make_app(store, live=False)
    seen: list[str] = []

    async def settle(pilot: Pilot[None]) -> None:
        for _ in range(3):
            await pilot.pause()
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    async def steps(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        box = app.query_one("#search-input", Input)
        for query in ("content delivery network", "invoice", "postgres"):
            box.value = query
            await asyncio.sleep(0.4)  # past the debounce
            await settle(pilot)
            caption = app.query_one("#search-caption", Static)
            seen.append(str(caption.render()))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await steps(pilot)

    asyncio.run(main())
    assert "did you mean: CDN (infra)" in seen[0]
    assert "did you mean" not in seen[1]
    # Two hits, the first the element Postgres itself: the line names only
    # elements the hits do not show.
    hits, _, names = seen[2].partition("did you mean: ")
    assert hits.startswith("2 hit(s)") and names, seen[2]
    assert "Postgres (infra)" not in names and "Orders (service)" in names
