"""Write an SVG screenshot of every view on the demo store (for the README).

Usage: ``python -m kgai_tui.ui.screenshots [OUT_DIR]`` (default ``assets/screenshots``).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from kgai_tui.demo import ASSETS, open_copy
from kgai_tui.ui.app import make_app

SHOTS: list[tuple[str, tuple[str, ...]]] = [
    ("1-elements", ("1", "down", "down", "down", "down", "down", "down", "down")),
    ("2-graph", ("1", "down", "down", "down", "down", "down", "down", "down", "2")),
    ("3-timeline", ("3",)),
    ("4-conflicts", ("4",)),
    ("5-search", ("5", *"invoice", "enter")),
    ("6-paths", ("6", *"services/checkout/order/api.go", "enter")),
    ("7-people", ("7",)),
    (
        "8-time-slider",
        ("1", "left_curly_bracket", "left_curly_bracket", "left_curly_bracket"),
    ),
    ("9-resolve", ("4", "r", "n", *"Sold-out products stay 30 days, marked")),
    ("10-story", ("1", "down", "down", "down", "down", "down", "down", "down", "s")),
    ("11-query", ("8", "ctrl+p", *"replaced", "enter")),
]


async def _shoot(out: Path, name: str, keys: tuple[str, ...]) -> Path:
    app = make_app(open_copy(), label="demo store", live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        await app.screen.workers.wait_for_complete()
        await pilot.pause()
        return Path(app.save_screenshot(f"{name}.svg", str(out)))


def main(argv: list[str]) -> int:
    """Write one SVG per view."""
    out = Path(argv[0]) if argv else ASSETS / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    for name, keys in SHOTS:
        print(asyncio.run(_shoot(out, name, keys)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
