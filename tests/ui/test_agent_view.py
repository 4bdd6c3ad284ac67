"""What an agent sees: key 6 shows the exact recall bytes of ``kgai-tui context --json``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from settle import settle
from textual.pilot import Pilot
from textual.widgets import Input, Static

from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.views.agent import AgentScreen, equivalent_command

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")


def _drive(app: KgaiApp, steps: Callable[[Pilot[None]], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await steps(pilot)

    asyncio.run(main())


def test_key_a_shows_the_recall_payload_an_agent_gets(demo_store: Path) -> None:
    """Type a path and a topic; the panel holds the CLI's --json stdout exactly."""
    app = make_app(demo_store, live=False)
    seen: dict[str, str] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("3", "A")  # from the Timeline: no element, empty boxes
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AgentScreen)
        seen["empty"] = screen.payload
        await pilot.press(*"services/payments/*")
        await pilot.press("tab", *"refunds")
        await settle(pilot)
        seen["query"] = screen.payload
        await pilot.press("escape")
        await pilot.pause()
        seen["after"] = type(app.screen).__name__

    _drive(app, steps)

    def cli(*args: str) -> str:
        done = subprocess.run(
            [KGAI_TUI, "context", "--store", str(demo_store), *args, "--json"],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    assert seen["empty"] == cli()
    assert seen["query"] == cli("--paths", "services/payments/*", "--about", "refunds")
    assert '"items": [' in seen["query"] and "Payments" in seen["query"]
    assert seen["after"] != "AgentScreen"


def test_key_a_on_an_element_starts_from_its_paths(demo_store: Path) -> None:
    """From Elements (or the Graph), ``A`` asks what an agent editing the chosen
    element's files is told: its ``paths`` prop, split as recall splits it."""
    app = make_app(demo_store, live=False)
    seen: dict[str, str] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("f", *"Refunds", "enter", "2", "A")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AgentScreen)
        seen["paths"] = screen.query_one("#agent-paths", Input).value
        seen["payload"] = screen.payload

    _drive(app, steps)
    assert seen["paths"] == "services/payments/refunds/*"
    argv = [KGAI_TUI, "context", "--store", str(demo_store), "--paths", seen["paths"]]
    done = subprocess.run(
        [*argv, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert seen["payload"] == done.stdout
    assert '"name": "Refunds"' in done.stdout


def test_equivalent_command_reproduces_the_payload() -> None:
    """The command line shown under the inputs is quoted for a shell."""
    line = equivalent_command(Path("/s t"), "a.go, b/*", "two words")
    assert line == (
        "kgai-tui context --store '/s t' --paths 'a.go,b/*' --about 'two words' --json"
    )


def test_a_path_holding_control_characters_is_not_put_in_the_box(
    tmp_path: Path,
) -> None:
    """``A`` on an element whose paths prop holds an escape sequence starts from
    its printable paths only: a text box draws what it holds as it is, and an
    ``ESC ]0;`` there retitled the terminal. The command line shown is drawn with
    its controls made visible."""
    from builders import ShardWriter, decision, upsert, write_store

    w = ShardWriter("i1")
    evil = upsert("service", "Evil", paths="src/ok/* src/evil/\x1b]0;X\x07/*")
    w.add(decision("Evil paths", [evil]), lamport=1, recorded_at="2026-01-01T00:00:00Z")
    root = write_store(tmp_path / "s", {"i1.ndjson": w.to_bytes()})
    app = make_app(root, live=False)
    seen: dict[str, str] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AgentScreen)
        seen["paths"] = screen.query_one("#agent-paths", Input).value
        box = screen.query_one("#agent-paths", Input)
        box.value = "src/\x1b]0;Y\x07"
        await settle(pilot)
        seen["command"] = str(screen.query_one("#agent-command", Static).render())

    _drive(app, steps)
    assert seen["paths"] == "src/ok/*"
    assert "\x1b" not in seen["command"] and "␛]0;Y␇" in seen["command"]
