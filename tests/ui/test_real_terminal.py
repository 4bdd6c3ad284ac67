"""The installed `kgai-tui` in a real terminal (tmux), driven with send-keys."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.kg import conflicts_obj
from kgai_tui.core.wire.codec import decode_line

KGAI_TUI = Path(sys.executable).parent / "kgai-tui"


class Tmux:
    """A detached tmux session running one command."""

    def __init__(
        self, command: str, env: dict[str, str], size: tuple[int, int]
    ) -> None:
        """Start the session."""
        self.name = f"kgai-test-{uuid.uuid4().hex[:8]}"
        self.env = env
        width, height = size
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                str(width),
                "-y",
                str(height),
                command,
            ],
            check=True,
            env=env,
        )

    def keys(self, *keys: str) -> None:
        """Send keys, one tmux argument each."""
        for key in keys:
            subprocess.run(
                ["tmux", "send-keys", "-t", self.name, key], check=True, env=self.env
            )
            time.sleep(0.15)

    def burst(self, *keys: str) -> None:
        """Send keys in one tmux command: the app reads them together, as it reads
        a burst over a slow link."""
        subprocess.run(
            ["tmux", "send-keys", "-t", self.name, *keys], check=True, env=self.env
        )

    def escape(self) -> None:
        """Send Escape alone. A key the app reads in the same read as the ESC byte
        is alt+key (``Escape`` then ``1`` typed ``¡`` into the search box once, on
        the CI's loaded cores, 0.15 s apart): the next key waits well past that."""
        self.keys("Escape")
        time.sleep(0.6)

    def type(self, text: str) -> None:
        """Type literal text (send-keys -l), then let the app read it."""
        subprocess.run(
            ["tmux", "send-keys", "-t", self.name, "-l", "--", text],
            check=True,
            env=self.env,
        )
        time.sleep(0.3)

    def screen(self) -> str:
        """The visible screen as text."""
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name],
            check=True,
            capture_output=True,
            text=True,
            env=self.env,
        )
        return out.stdout

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Wait until ``text`` is on screen; return the screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; screen was:\n{screen}")

    def close(self) -> None:
        """Kill the session."""
        subprocess.run(
            ["tmux", "kill-session", "-t", self.name], check=False, env=self.env
        )


@pytest.fixture
def tmux_app(demo_store: Path, tmp_path: Path) -> Iterator[Tmux]:
    """The installed console script on a demo copy, in tmux at 120x40."""
    yield from _session(demo_store, tmp_path)


def _session(
    demo_store: Path,
    tmp_path: Path,
    size: tuple[int, int] = (120, 40),
    extra_env: dict[str, str] | None = None,
) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (.ci/run installs it with apt-get)")
    assert KGAI_TUI.exists(), "install the package first (pip install -e .)"
    env = dict(os.environ)
    env["TMUX_TMPDIR"] = str(tmp_path)
    env["TERM"] = "xterm-256color"
    env.pop("TMUX", None)
    # The size is tmux's: pytest-xdist's workers export COLUMNS=80 and LINES=24,
    # which a terminal program reads before asking the terminal.
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    env.update(extra_env or {})
    session = Tmux(f"{KGAI_TUI} {demo_store}", env, size)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture
def tmux_small(demo_store: Path, tmp_path: Path) -> Iterator[Tmux]:
    """The console script at 80x24, the clock fixed two weeks after the demo's
    last decision (relative moments are counted from it)."""
    yield from _session(
        demo_store, tmp_path, (80, 24), {"KGAI_TUI_NOW": "2026-06-15T00:00:00Z"}
    )


def test_conflicts_search_and_slider_in_tmux(tmux_app: Tmux, demo_store: Path) -> None:
    """Resolve a conflict, search, and scrub the slider in a real terminal."""
    screen = tmux_app.wait_for("2 open conflicts")
    assert "✓ healthy" in screen
    tmux_app.keys("4")
    screen = tmux_app.wait_for("decided two ways")
    assert "feature:ProductSearch" in screen and "service:Payments" in screen
    tmux_app.keys("r")
    tmux_app.wait_for("Choose how to end it")
    tmux_app.keys("Enter")  # keep side 1: a preview, nothing written
    tmux_app.wait_for("This line will be appended")
    tmux_app.keys("Enter")  # the focus starts on Back: Enter never appends
    tmux_app.wait_for("Choose how to end it")
    assert conflicts_obj(open_engine(demo_store).projection)["count"] == 2
    tmux_app.keys("1")
    tmux_app.wait_for("This line will be appended")
    tmux_app.keys("a")
    screen = tmux_app.wait_for("1 open conflict ")
    assert conflicts_obj(open_engine(demo_store).projection)["count"] == 1

    tmux_app.keys("5")
    tmux_app.wait_for("type to search")
    tmux_app.keys("i", "n", "v", "o", "i", "c", "e")
    screen = tmux_app.wait_for("hit(s) for")
    assert "Invoice" in screen

    tmux_app.escape()
    tmux_app.keys("1", "{", "{", "{")
    screen = tmux_app.wait_for("as of 2026-")
    assert "since last position" in screen
    tmux_app.keys(">")
    tmux_app.wait_for("now · [ ] step")
    tmux_app.keys("q")


def test_a_first_open_builds_the_model_and_its_history_in_tmux(
    tmux_app: Tmux, demo_store: Path
) -> None:
    """With nothing in the cache the explorer reads the log into the read model
    and its history once: the present and the slider's range on screen, ``[``
    steps back, and the store's cache directory holds the model and the time
    index, never a second copy of the store (the engine cache)."""
    from kgai_tui.core.store.cache_file import store_cache_dir

    screen = tmux_app.wait_for("2 open conflicts")
    screen = tmux_app.wait_for("● now")  # the history came with the first view
    assert "read the history" not in screen
    tmux_app.keys("[")
    screen = tmux_app.wait_for("as of 2026-")
    tmux_app.keys(">")
    tmux_app.wait_for("now · [ ] step")
    tmux_app.keys("q")
    inside = {p.name for p in store_cache_dir(demo_store).iterdir()}
    assert {"model.sqlite", "model.sqlite.seal", "engine.time.bin"} <= inside
    assert "engine.bin" not in inside, inside


def test_three_journeys_at_80x24(tmux_small: Tmux, demo_store: Path) -> None:
    """A tech lead resolves a conflict with a new decision that sets the contested
    property; a newcomer goes three months back, marks, returns to now and reads
    what changed; a developer types a path and reaches the decision in force."""
    app = tmux_small
    app.wait_for("2 conflicts")

    # A tech lead: the conflict on ProductSearch, ended by a new decision that
    # says what the element's show_sold_out is now.
    app.keys("4", "r")
    app.wait_for("Choose how to end it")
    app.keys("n")
    app.wait_for("Title of the new decision")
    app.type("Sold-out products stay 30 days, marked")
    app.keys("Tab")
    app.type("SEO keeps the page a month; support gets a clear mark.")
    app.keys("Tab", "C-u")
    app.type("first 30 days, marked")
    # What the field shows before the preview (keys reach the app in the order
    # typed, ui.key_order: on the CI's loaded cores Ctrl+U once ran after this
    # text, leaving the field and the preview empty).
    app.wait_for("first 30 days, marked")
    app.keys("C-n")
    app.wait_for("This line will be appended")
    assert not (demo_store / "log" / "i0de0000000000001.ndjson").exists()
    app.keys("a")
    screen = app.wait_for("sets show_sold_out = first 30 days, marked")
    if "Conflict resolved" not in screen:  # the toast may come a frame later
        screen = app.wait_for("Conflict resolved")
    assert "1 conflict " in screen and "Conflict resolved" in screen
    lines = (demo_store / "log" / "i0de0000000000001.ndjson").read_bytes()
    assert lines.count(b"\n") == 1
    decoded = decode_line(lines.rstrip(b"\n"))
    assert decoded.hash_ok and decoded.decision_id_ok
    event = decoded.event
    assert event is not None and event.decision is not None
    assert [(m.op, m.key, m.value) for m in event.decision.mutations or ()] == [
        ("set_prop", "show_sold_out", "first 30 days, marked")
    ]

    # A newcomer: three months back, a mark, now, and what changed since.
    app.keys("1")
    app.wait_for(" Elements ")
    app.keys("t")
    app.wait_for("Go to a moment")
    app.type("-3m")
    app.wait_for("3 months ago")
    app.keys("Enter")
    screen = app.wait_for("as of 2026-03-")
    assert "months ago" in screen
    app.keys("m", ">")
    app.wait_for("now · [ ] step")
    app.keys("D")
    app.wait_for("Diff: 2026-03-")
    screen = app.wait_for("decisions recorded")
    assert "Decisions recorded" in screen
    app.escape()
    app.wait_for("? help")

    # A developer: what governs the order API's file?
    app.keys("6")
    app.wait_for("Type a path or a glob")
    app.type("services/checkout/order/api.go")
    app.wait_for("element(s) govern")
    screen = app.wait_for("Orders keep the tax breakdown")  # once no toast is over it
    assert "business object:Order" in screen
    app.keys("Enter")  # to the answer (the elements ranked as recall ranks them)
    if screen.index("service:Checkout") < screen.index("business object:Order"):
        app.keys("Down")
    app.keys("Enter")  # show the element
    app.wait_for("In force")
    screen = app.wait_for("Orders keep the tax breakdown they were sold")
    assert " Elements " in screen
    app.keys("q")  # back to Paths: q goes back while there is somewhere to go
    app.wait_for("element(s) govern")


def test_a_burst_of_keys_lands_field_by_field(
    tmux_small: Tmux, demo_store: Path
) -> None:
    """A whole resolution typed in one read (a slow ssh link delivers keys so):
    the view, the dialog, a new decision's title, its why and its prop (Ctrl+U
    first), the preview. Each text is in its own field of the preview, the prop's
    value whole; Escape back through the steps leaves the store as it was."""
    app = tmux_small
    app.wait_for("2 conflicts")
    app.burst(
        "4",
        "r",
        "n",
        "Keep them a month",
        "Tab",
        "SEO and support agree",
        "Tab",
        "C-u",
        "first 30 days, marked",
        "C-n",
    )
    screen = app.wait_for("This line will be appended")
    flat = " ".join(screen.split())  # the preview wraps at 80 columns
    assert "title Keep them a month author" in flat, screen
    assert "why SEO and support agree decides" in flat, screen
    assert "show_sold_out = first 30 days, marked" in flat, screen
    assert "a append" in screen, "the dialog's own keys: " + screen
    for _ in ("to write", "to choose", "out"):
        app.escape()
    app.wait_for("2 conflicts")
    assert not (demo_store / "log" / "i0de0000000000001.ndjson").exists()
