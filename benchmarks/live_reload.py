"""The explorer picking up a teammate's events: to the new present, then to the history.

    python benchmarks/live_reload.py STORE --events N [--writers 30] \
        [--elements 10000] [--append 1000] [--rounds 3] --src SRC --cache-dir CACHE

STORE is a store written by ``kgai-tui bench generate`` with ``--writers`` and
``--elements``, holding exactly its first N generated events. The explorer opens it
in tmux at 120x40 (``PYTHONPATH`` set to SRC, a ``git archive`` of a commit,
compiled; ``KGAI_TUI_CACHE_DIR`` to CACHE); ``[`` reads the slider's history and
``>`` goes back to now. Then each round appends ``--append`` events
(:func:`benchmarks.genlog.append_store`, as a teammate's sync would) and prints
the seconds until the header's decision count changes (the live poll, the
model's update, the new present drawn) and until the slider shows its moments
again (the history brought up to date). The store grows: pass the new count
next time (printed last).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.append_then_read import first_status
from benchmarks.genlog import GenParams, append_store

#: How long one wait may take (``--timeout``, seconds).
_TIMEOUT: list[float] = [300.0]


def _screen(session: str) -> list[str]:
    """The pane's lines, the blank ones below the app's last line left out (a
    detached pane may keep a size the app never saw)."""
    out = subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
    )
    lines = out.stdout.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


#: The header once a store is shown: its decision count, whatever the width
#: ("2000 decisions" or "2000 dec").
_COUNTS: Final = re.compile(r"(\d+) dec")


def _count(lines: list[str]) -> str | None:
    """The decision count the header shows (``None``: none yet)."""
    found = _COUNTS.search(lines[0]) if lines else None
    return None if found is None else found.group(1)


def _slider_ready(lines: list[str]) -> bool:
    """The slider's line (above the key bar) shows its moments up to now."""
    return len(lines) >= 2 and lines[-2].rstrip().endswith(" now")


def _recounted(lines: list[str], before: str | None) -> bool:
    """The header counts other decisions than ``before``."""
    return _count(lines) not in (None, before)


def _caught_up(lines: list[str], before: str | None) -> bool:
    """Recounted, and the slider shows its moments again."""
    return _recounted(lines, before) and _slider_ready(lines)


def _wait(session: str, done: Callable[[list[str]], bool], since: float) -> float:
    """Seconds from ``since`` until the screen is ``done``; exits, showing the
    screen, when it is not within ``--timeout``."""
    while time.monotonic() - since < _TIMEOUT[0]:
        if done(_screen(session)):
            return time.monotonic() - since
        time.sleep(0.05)
    sys.exit("not in time; the screen:\n" + "\n".join(_screen(session)))


def main() -> None:
    """Open the explorer, then append and time the pick-up, round by round."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--writers", type=int, default=30)
    parser.add_argument("--elements", type=int, default=10_000)
    parser.add_argument("--append", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--src", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, required=True)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    _TIMEOUT[0] = args.timeout
    counted = first_status(args.store, args.src.resolve(), args.cache_dir)[2]
    if counted != args.events:
        # Appending the wrong generated events would put lamports in the past.
        sys.exit(f"the store holds {counted} events, not --events {args.events}")
    env = f"PYTHONPATH={args.src.resolve()} KGAI_TUI_CACHE_DIR={args.cache_dir}"
    command = (
        f"exec env {env} {shlex.quote(sys.executable)} -m kgai_tui open"
        f" --store {shlex.quote(str(args.store))}"
    )
    session = f"kgai-live-{os.getpid()}"
    # Started in SRC: ``python -m`` puts the working directory first on the path,
    # before PYTHONPATH (a run from a checkout would run the checkout).
    where = ["-c", str(args.src.resolve())]
    size = ["-x", "120", "-y", "40"]
    subprocess.run(
        ["tmux", "new", "-d", "-s", session, *size, *where, command], check=True
    )
    total = args.events
    try:
        opened = _wait(
            session,
            lambda s: _count(s) is not None,
            time.monotonic(),
        )
        print(f"opened in {opened:.2f} s", flush=True)
        subprocess.run(["tmux", "send-keys", "-t", session, "["])
        _wait(
            session,
            lambda s: len(s) > 1 and s[1].startswith(" as of"),
            time.monotonic(),
        )
        subprocess.run(["tmux", "send-keys", "-t", session, ">"])
        _wait(session, _slider_ready, time.monotonic())
        time.sleep(2.0)
        for n in range(args.rounds):
            shown = _count(_screen(session))
            total += append_store(
                args.store, GenParams(total, args.writers, args.elements), args.append
            )
            start = time.monotonic()
            present = _wait(session, partial(_recounted, before=shown), start)
            history = _wait(session, partial(_caught_up, before=shown), start)
            print(
                f"round {n + 1} ({total} events): the new present {present:.2f} s,"
                f" the history {history:.2f} s",
                flush=True,
            )
            time.sleep(2.0)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
    print(f"the store now holds {total} events")


if __name__ == "__main__":
    main()
