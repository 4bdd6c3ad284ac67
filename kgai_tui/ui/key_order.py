"""Keys handled in the order they were typed, however fast they arrive.

Textual hands a key to the focused widget's queue and runs an ordinary binding (a
widget's own, such as an input's Backspace, or a screen's, such as Tab) only once
the key has bubbled back up to the app; the keys after it are handed out
meanwhile. Keys that arrive together (a burst over a slow ssh link, a loaded
machine, a fast typist) were then handled out of order, measured in tmux: Backspace
then ``d`` in a text box left ``abc`` instead of ``abd`` (the letter went in first,
then Backspace took it); Ctrl+U then a value left the box empty; a view key then
``r`` sent ``r`` to the view being left; Tab then the next field's text typed it
into the field being left.

:class:`KeyOrder` hands out one key (or one paste) at a time. The next waits until
the one before has stopped at a widget (it was handled there) or come back to the
app (its bindings ran), and then until the app is idle, so what its handling
queued (a focus moved with ``focus()``, a dialog mounted) has happened. A key that
never comes back (its widget went away) holds the next for :data:`HOLD_LIMIT` at
most, and so does a wait for an idle app that never comes.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from textual import events
from textual.app import App

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.dom import DOMNode
    from textual.message import Message
    from textual.message_pump import MessagePump
    from textual.timer import Timer

__all__ = ["HOLD_LIMIT", "KeyOrder", "OrderedKeys"]

#: What is handed out in order: keys, and text pasted between them.
_Typed = events.Key | events.Paste

#: Seconds a key waits at most for the one before it to be handled.
HOLD_LIMIT: Final = 0.5


class KeyOrder:
    """The app's keys, one in flight at a time (see the module)."""

    def __init__(self, app: App[None]) -> None:
        """Order the keys ``app`` reads (it calls :meth:`waits`, :meth:`watch` and
        :meth:`read` for each)."""
        self._app = app
        self._held: deque[_Typed] = deque()
        self._flying: _Typed | None = None
        self._watched: list[MessagePump] = []
        self._timer: Timer | None = None
        self._settling = False
        # One more per key done: a late call for an earlier turn is let be.
        self._turn = 0
        # The app reports a key it has read once before the key is back up: skipped.
        self._skip_app = False

    @property
    def busy(self) -> bool:
        """Whether a key is being handled, or its handling settling, or a key waits."""
        return self._flying is not None or self._settling or bool(self._held)

    @property
    def waiting(self) -> int:
        """How many keys wait for their turn."""
        return len(self._held)

    def waits(self, key: _Typed) -> bool:
        """Whether ``key``, just read, waits for the keys before it (then it is
        kept, and read again in its turn)."""
        if key is self._flying:
            return False  # its turn: posted again by _next
        if self.busy:
            self._held.append(key)
            return True
        self._flying = key
        return False

    def watch(self, key: _Typed, target: DOMNode) -> None:
        """Before the app reads ``key`` (its turn): follow it from ``target``, the
        widget it is handed to unless a priority binding takes it, back up."""
        for node in target.ancestors_with_self:
            node.message_signal.subscribe(
                self._app, self._seen_by(node, key), immediate=True
            )
            self._watched.append(node)
        self._timer = self._app.set_timer(HOLD_LIMIT, self._done, name="key-order")

    def read(self, key: _Typed) -> None:
        """The app has read ``key``: handled there (a priority binding, never handed
        to a widget) it is done; else it is done once back up (:meth:`watch`)."""
        if key.is_forwarded:
            self._skip_app = True
        else:
            self._done()

    def _seen_by(self, node: MessagePump, key: _Typed) -> Callable[[Message], None]:
        """What ``node`` calls with each message it has handled."""
        app = self._app

        def seen(message: Message) -> None:
            if message is not key or key is not self._flying:
                return
            if node is app and self._skip_app:
                self._skip_app = False  # the app has handed it on: not back yet
            elif node is app or key._stop_propagation:
                self._done()

        return seen

    def _done(self) -> None:
        """The key in flight was handled: the next one's turn once the app is idle."""
        if self._flying is None:
            return
        for node in self._watched:
            node.message_signal.unsubscribe(self._app)
        self._watched.clear()
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._flying = None
        self._settling = True
        self._turn += 1
        self._app.call_after_refresh(self._next, self._turn)
        # The refresh may never come for it (the screen it went to was closed by
        # this very key): the next key then waits no longer than a stuck one.
        self._app.set_timer(
            HOLD_LIMIT, partial(self._next, self._turn), name="key-order-settle"
        )

    def _next(self, turn: int) -> None:
        """Once the app is idle after a key: read the first key held again (it goes
        through :meth:`waits` at once)."""
        if turn != self._turn or not self._settling:
            return
        self._settling = False
        if self._flying is not None or not self._held:
            return
        key = self._flying = self._held.popleft()
        self._app.post_message(key)


class OrderedKeys(App[None]):
    """An app that reads its keys through a :class:`KeyOrder`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """As :class:`~textual.app.App`."""
        super().__init__(*args, **kwargs)
        self.key_order = KeyOrder(self)

    async def on_event(self, event: events.Event) -> None:
        """Keys and pastes one at a time, in the order typed; other events as Textual
        has them."""
        if not isinstance(event, _Typed) or event.is_forwarded:
            await super().on_event(event)
            return
        if self.key_order.waits(event):
            return
        self.key_order.watch(event, self.focused or self.screen)
        await super().on_event(event)
        self.key_order.read(event)
