"""Keys that arrive together are handled in the order they were typed.

A terminal read can hold many keys (a burst over a slow ssh link, a loaded
machine): the driver posts them to the app one after another, with nothing in
between. Each test here posts a burst the same way, into the real explorer on a
copy of the demo store, and reads the widgets afterwards. Without
:class:`~kgai_tui.ui.key_order.KeyOrder`, Textual handed each key to the focused
widget before the one before it had run its binding: Backspace then ``d`` left
``abc``, Ctrl+U then a value left the field empty, a view key then ``r`` never
opened the resolve dialog, and Tab then text typed into the field being left.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import ComposeResult
from textual.widgets import Input, Static, TextArea

from kgai_tui.ui.app import KgaiApp
from kgai_tui.ui.key_order import HOLD_LIMIT, KeyOrder, OrderedKeys
from kgai_tui.ui.resolve import ResolveScreen

SIZE = (80, 24)
_CHARACTERS = {"tab": None, "backspace": None, "ctrl+u": "\x15", "enter": "\r"}


def _key(name: str) -> events.Key:
    if name in _CHARACTERS:
        return events.Key(name, _CHARACTERS[name])
    return events.Key(name, name)


def _burst(app: Any, *keys: str) -> None:
    """Post ``keys`` to the app together, as the driver posts one read."""
    for name in keys:
        for key in [name] if name in _CHARACTERS or len(name) == 1 else list(name):
            app.post_message(_key(" " if key == " " else key))


async def _settle(pilot: Any, until: Any, seconds: float = 10.0) -> None:
    for _ in range(int(seconds / 0.05)):
        await pilot.pause(0.05)
        if until():
            return
    raise AssertionError("the app never got there")


async def _poll(until: Any, seconds: float) -> None:
    """:func:`_settle` without the pilot (its pause waits for every widget)."""
    for _ in range(int(seconds / 0.02)):
        await asyncio.sleep(0.02)
        if until():
            return
    raise AssertionError("the app never got there")


def _run(root: Path, body: Any) -> Any:
    app = KgaiApp(root, live=False)

    async def main() -> Any:
        async with app.run_test(size=SIZE) as pilot:
            await _settle(pilot, lambda: app.snapshot is not None)
            return await body(app, pilot)

    return asyncio.run(main())


async def _fields(app: Any, pilot: Any) -> tuple[str, str, str]:
    """Once every key is handled: the resolve dialog's title, why and first prop."""
    await _settle(pilot, lambda: not app.key_order.busy)
    await pilot.pause(0.2)
    screen = app.screen
    return (
        screen.query_one("#resolve-title", Input).value,
        screen.query_one("#resolve-rationale", TextArea).text,
        screen.query_one("#prop-0", Input).value,
    )


@contextlib.contextmanager
def _unordered() -> Iterator[None]:
    """Textual's own order (for the control runs that show the failure)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(OrderedKeys, "on_event", KgaiApp.__mro__[2].on_event)
        yield


def test_backspace_then_a_letter_in_a_text_box(demo_store: Path) -> None:
    async def body(app: Any, pilot: Any) -> str:
        _burst(app, "1", "f")
        box = app.query_one("#element-filter", Input)
        await _settle(pilot, lambda: app.focused is box)
        _burst(app, "abc", "backspace", "d")
        await _settle(pilot, lambda: not app.key_order.busy)
        await pilot.pause(0.2)
        return str(box.value)

    assert _run(demo_store, body) == "abd"


def test_a_view_key_then_a_key_of_that_view(demo_store: Path) -> None:
    """``4`` then ``r``: the resolve dialog of the Conflicts view opens."""

    async def body(app: Any, pilot: Any) -> str:
        _burst(app, "4", "r")
        await _settle(
            pilot,
            lambda: isinstance(app.screen, ResolveScreen) and app.focused is not None,
        )
        return str(app.focused.id)

    assert _run(demo_store, body) == "resolve-choice"


def test_a_resolution_typed_in_one_burst(demo_store: Path) -> None:
    """The whole write step in one read: each text lands in its own field, and
    Ctrl+U clears the prop before its new value, not after."""

    async def body(app: Any, pilot: Any) -> tuple[str, str, str]:
        _burst(app, "4", "r")
        await _settle(pilot, lambda: isinstance(app.screen, ResolveScreen))
        _burst(
            app,
            "n",
            "Keep them a month",
            "tab",
            "SEO and support agree",
            "tab",
            "ctrl+u",
            "first 30 days, marked",
        )
        return await _fields(app, pilot)

    assert _run(demo_store, body) == (
        "Keep them a month",
        "SEO and support agree",
        "first 30 days, marked",
    )


def test_text_pasted_right_after_tab_lands_in_the_next_field(
    demo_store: Path,
) -> None:
    """A paste is handed out in its turn too: after Tab, in the field Tab reached."""

    async def body(app: Any, pilot: Any) -> tuple[str, str, str]:
        _burst(app, "4", "r")
        await _settle(pilot, lambda: isinstance(app.screen, ResolveScreen))
        _burst(app, "n", "Title", "tab")
        app.post_message(events.Paste("pasted why"))
        return await _fields(app, pilot)

    assert _run(demo_store, body) == ("Title", "pasted why", "always, marked")


def test_without_the_order_the_same_burst_goes_astray(demo_store: Path) -> None:
    """The control: Textual's own order loses the Backspace's place (this is what
    the tests above guard against, on this machine, with this Textual)."""

    async def body(app: Any, pilot: Any) -> str:
        _burst(app, "1", "f")
        box = app.query_one("#element-filter", Input)
        await _settle(pilot, lambda: app.focused is box)
        with _unordered():
            _burst(app, "abc", "backspace", "d")
            await pilot.pause(0.5)
        return str(box.value)

    assert _run(demo_store, body) == "abc"


class _Stuck(Static, can_focus=True):
    """A widget whose ``s`` takes far longer than :data:`HOLD_LIMIT` to handle."""

    def __init__(self) -> None:
        super().__init__("stuck")
        self.seen: list[str] = []

    async def on_key(self, event: events.Key) -> None:
        if event.key == "s":
            self.seen.append("s begins")
            await asyncio.sleep(HOLD_LIMIT * 8)
            self.seen.append("s ends")


class _StuckApp(OrderedKeys):
    def __init__(self) -> None:
        super().__init__()
        self.back: list[str] = []  # keys back up at the app, their bindings checked

    def compose(self) -> ComposeResult:
        yield _Stuck()

    def on_key(self, event: events.Key) -> None:
        self.back.append(event.key)


def test_a_key_stuck_in_a_widget_holds_the_next_one_only_so_long() -> None:
    """The next key waits :data:`HOLD_LIMIT`, not until the stuck one is done."""
    app = _StuckApp()

    async def main() -> tuple[list[str], list[str]]:
        async with app.run_test() as pilot:
            stuck = app.query_one(_Stuck)
            app.set_focus(stuck)
            await pilot.pause(0.1)
            _burst(app, "s", "x")
            await _poll(lambda: "s begins" in stuck.seen, HOLD_LIMIT * 4)
            await _poll(lambda: app.key_order.waiting == 0, HOLD_LIMIT * 4)
            let_go = list(stuck.seen)
            await _poll(lambda: "s ends" in stuck.seen, HOLD_LIMIT * 20)
            # Closing before ``s`` is back up would leave it to a closed app.
            await _poll(lambda: "s" in app.back, HOLD_LIMIT * 4)
            return let_go, stuck.seen

    let_go, seen = asyncio.run(main())
    assert let_go == ["s begins"], "x was let go while s was still being handled"
    assert seen == ["s begins", "s ends"]


class _Box(OrderedKeys):
    def compose(self) -> ComposeResult:
        yield Input(id="box")


def test_a_turn_whose_refresh_never_comes_holds_the_next_key_only_so_long() -> None:
    """A key that closes the screen its settling waits on (the refresh never
    comes): the keys after it still arrive, in order, each within
    :data:`HOLD_LIMIT` (here every such refresh is dropped)."""
    app = _Box()

    def dropping(callback: Any, *args: Any, **kwargs: Any) -> bool:
        if getattr(callback, "__func__", None) is KeyOrder._next:
            return True  # "scheduled", never run
        return original(callback, *args, **kwargs)

    async def main() -> str:
        async with app.run_test() as pilot:
            await pilot.pause(0.1)
            _burst(app, "abc")
            await _poll(
                lambda: app.query_one(Input).value == "abc" and not app.key_order.busy,
                HOLD_LIMIT * 20,
            )
            return str(app.query_one(Input).value)

    original = app.call_after_refresh
    app.call_after_refresh = dropping  # type: ignore[method-assign]
    assert asyncio.run(main()) == "abc"


def test_a_late_settle_of_an_earlier_key_does_not_let_the_next_one_go() -> None:
    """Each key's settling ends at the app's next refresh, or at :data:`HOLD_LIMIT`.
    The limit of a key whose refresh came already can fire while a later key
    settles: it must not release the key after that one before its refresh (here
    both are held and run by hand, in that order)."""
    app = _Box()
    refreshes: list[Any] = []  # each key's "once the app is idle"
    limits: list[Any] = []  # each key's "at the latest"

    def holding_refresh(callback: Any, *args: Any, **kwargs: Any) -> bool:
        if getattr(callback, "__func__", None) is KeyOrder._next:
            refreshes.append(lambda: callback(*args, **kwargs))
            return True
        return original_refresh(callback, *args, **kwargs)

    def holding_limit(delay: float, callback: Any = None, **kwargs: Any) -> Any:
        if kwargs.get("name") == "key-order-settle":
            limits.append(callback)
            return None  # fired by hand only (its caller keeps nothing of it)
        return original_timer(delay, callback, **kwargs)

    async def main() -> tuple[int, str]:
        async with app.run_test() as pilot:
            await pilot.pause(0.1)
            _burst(app, "abc")
            await _poll(lambda: len(refreshes) == 1, HOLD_LIMIT)  # a handled
            refreshes[0]()  # b's turn
            await _poll(lambda: len(refreshes) == 2, HOLD_LIMIT)  # b handled
            limits[0]()  # a's limit, late: b still settles
            held = app.key_order.waiting
            refreshes[1]()  # b settled: c's turn
            await _poll(lambda: app.query_one(Input).value == "abc", HOLD_LIMIT)
            return held, str(app.query_one(Input).value)

    original_refresh, original_timer = app.call_after_refresh, app.set_timer
    app.call_after_refresh = holding_refresh  # type: ignore[method-assign]
    app.set_timer = holding_limit  # type: ignore[method-assign]
    assert asyncio.run(main()) == (1, "abc"), "c was let go before b settled"
