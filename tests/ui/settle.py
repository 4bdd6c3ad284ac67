"""Let the explorer settle in a Pilot test: its messages handled and the workers
it and its screen started finished, a few rounds over (a worker's callback may
start another, a load its history)."""

from __future__ import annotations

from textual.pilot import Pilot


async def settle(pilot: Pilot[None], rounds: int = 3) -> None:
    """Pause, then wait for the app's and the screen's workers, ``rounds`` times."""
    for _ in range(rounds):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.app.screen.workers.wait_for_complete()
    await pilot.pause()
