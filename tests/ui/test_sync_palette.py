"""The palette's "Sync with the remote" and the header's remote line, with real git.

The remote is a bare repository in ``tmp_path``; the clock is fixed
(``KGAI_TUI_NOW``), so the header's "synced 12:03 UTC" is exact.
"""

from __future__ import annotations

import asyncio
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from settle import settle
from textual.pilot import Pilot

from kgai_tui.sync.s3_remote import set_session_remote
from kgai_tui.sync.status import sync_status
from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.widgets.header import StoreHeader, sync_text

NOW = "2026-06-01T12:03:00Z"


@pytest.fixture(autouse=True)
def _fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGAI_TUI_NOW", NOW)


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """An empty bare repository: the team's remote."""
    path = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    return path


async def _palette_sync(pilot: Pilot[None]) -> None:
    """ctrl+p, the command's words, enter; then wait for the sync and the reload."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*"Sync with the remote")
    await asyncio.sleep(0.5)
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot)


def _header(app: KgaiApp) -> str:
    return str(app.query_one(StoreHeader).render())


def _notes(app: KgaiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def _run(app: KgaiApp, seen: dict[str, Any]) -> None:
    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            seen["before"] = _header(app)
            await _palette_sync(pilot)
            seen["after"] = _header(app)
            seen["notes"] = _notes(app)
            seen["severities"] = [n.severity for n in app._notifications]

    asyncio.run(main())


def test_palette_sync_pushes_and_the_header_says_when(
    demo_store: Path, bare: Path
) -> None:
    """The header names the remote; after the palette's sync it says "synced 12:03"."""
    set_session_remote(demo_store, str(bare))
    app = make_app(demo_store, label="demo store", live=False)
    seen: dict[str, Any] = {}
    _run(app, seen)

    before, after = (str(seen[k]).splitlines()[-1] for k in ("before", "after"))
    assert before.startswith("remote: /")
    assert before.endswith("/remote.git · not synced in this session")
    assert after.startswith("remote: /")
    assert after.endswith("/remote.git · synced 12:03 UTC")
    notes = seen["notes"]
    assert isinstance(notes, list)
    outcome = [n for n in notes if "synced with" in n]
    assert len(outcome) == 1, notes
    assert outcome[0].startswith(f"✓ synced with {bare}")
    assert f"↑ pushed to {bare}" in outcome[0]
    assert "error" not in seen["severities"]
    # The same sync the CLI runs: the store's shards are on the remote's main.
    pushed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "main"],
        cwd=bare,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert any(p.startswith("log/") and p.endswith(".ndjson") for p in pushed)
    assert app.snapshot is not None  # reloaded, still on screen
    # What the store itself knows, for the next explorer: git's last exchange.
    status = sync_status(demo_store)
    assert status.remote == str(bare)
    assert status.last_synced is not None


def test_the_sync_line_dates_an_older_sync_and_hides_credentials() -> None:
    """Today: the time only; another day: the date too. Credentials never show."""
    from kgai_tui.core.reads.health import redact

    now = datetime(2026, 6, 1, 12, 3, tzinfo=UTC)
    remote = redact("https://bot:hunter2@git.example.com/team/decisions.git")
    today = sync_text(remote, now, now).plain
    older = sync_text(remote, datetime(2026, 5, 30, 9, 12, tzinfo=UTC), now).plain
    assert (
        today
        == "remote: https://***@git.example.com/team/decisions.git · synced 12:03 UTC"
    )
    assert older.endswith(" · synced 2026-05-30 09:12 UTC")
    assert "hunter2" not in today


def test_sync_without_a_remote_says_how_to_set_one(demo_store: Path) -> None:
    """No remote: a note naming `kgai-tui remote URL`, no header line, nothing done."""
    app = make_app(demo_store, label="demo store", live=False)
    seen: dict[str, Any] = {}
    _run(app, seen)

    notes = seen["notes"]
    assert isinstance(notes, list)
    assert any("kgai-tui remote URL" in n for n in notes), notes
    assert "remote:" not in str(seen["after"])
    assert not (demo_store / ".git").exists()  # nothing was committed anywhere


def test_a_failed_sync_is_one_line(demo_store: Path, tmp_path: Path) -> None:
    """A remote with no repository: an error notification of one line, no traceback."""
    missing = tmp_path / "no-such-remote.git"
    set_session_remote(demo_store, str(missing))
    app = make_app(demo_store, label="demo store", live=False)
    seen: dict[str, Any] = {}
    _run(app, seen)

    notes = seen["notes"]
    assert isinstance(notes, list)
    errors = [n for n, s in zip(notes, seen["severities"], strict=True) if s == "error"]
    assert len(errors) == 1, notes
    assert "no git repository at the remote" in errors[0]
    assert "\n" not in errors[0] and "Traceback" not in errors[0]
    assert str(seen["after"]).endswith(
        "no-such-remote.git · not synced in this session"
    )
