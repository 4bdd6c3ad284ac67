"""What an agent sees: the exact ``recall`` payload for a path or a topic.

An agent that calls the MCP ``recall`` tool (or runs ``kgai-tui context --json``)
receives these bytes and nothing else. This screen lets a person type the same
arguments and read the same bytes before trusting what agents are told. It always
shows the store as it is now, wherever the time slider stands, because that is what
an agent gets.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static, TextArea
from textual.worker import get_current_worker

from kgai_tui.ui.commands import bindings
from kgai_tui.ui.safe_text import plain
from kgai_tui.ui.threads import thread_worker
from kgai_tui.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    # The engine and the JSON reads load when the screen first computes (in its
    # worker), not when the explorer starts.
    from kgai_tui.core.reads.store import Store

__all__ = ["AgentScreen", "agent_payload", "did_you_mean", "equivalent_command"]

StoreSource = Callable[[], "Store | None"]


def equivalent_command(root: Path, paths: str, topic: str) -> str:
    """The CLI line that prints the same bytes (for a person to reproduce)."""
    from kgai_tui.core.answers.answer import split_paths

    words = ["kgai-tui", "context", "--store", str(root)]
    joined = ",".join(split_paths(paths))
    if joined:
        words += ["--paths", joined]
    if topic:
        words += ["--about", topic]
    return shlex.join([*words, "--json"])


def agent_payload(engine: Store, paths: str, topic: str) -> str:
    """The recall JSON an agent receives for these arguments, as text.

    Args:
        engine: the store as it is now.
        paths: file paths or globs, comma-separated.
        topic: a topic in words.
    """
    from kgai_tui.core.answers.answer import encode, failure
    from kgai_tui.core.answers.recall import recall_answer
    from kgai_tui.core.errors import KgaiError

    try:
        data = encode(recall_answer(lambda: engine, paths, topic))
    except KgaiError as exc:
        data = encode(failure(str(exc)))
    return data.decode("utf-8")


def did_you_mean(payload: str) -> str:
    """The "did you mean" line for a payload carrying hints ("" when it has none).

    A thin recall's ``hints`` name the elements nearest to the topic; an agent is
    told to retry with the first one's name, and so is the person reading here.
    """
    import json

    try:
        hints = json.loads(payload).get("hints")
    except (ValueError, AttributeError):
        return ""
    if hints is None:
        return ""
    if not hints:
        return "no hint: nothing in the store is near these words"
    names = ", ".join(f"{h['name']} ({h['kind']})" for h in hints)
    return f"did you mean: {names} · an agent retries with topic {hints[0]['name']}"


class AgentScreen(ModalScreen[None]):
    """Type a path or a topic; read the exact recall JSON an agent would get."""

    DEFAULT_CSS = """
    AgentScreen { align: center top; }
    AgentScreen #agent-box {
        width: 100%; max-width: 120; height: 1fr;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    AgentScreen #agent-command { color: $text-muted; height: auto; }
    AgentScreen #agent-hints { color: $warning; height: auto; }
    AgentScreen #agent-json { height: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings("agent")

    def __init__(
        self, root: Path, engine_source: StoreSource, *, paths: str = ""
    ) -> None:
        """Show recall payloads for the store at ``root``.

        Args:
            root: the store directory (opened directly if the app has no engine).
            engine_source: returns the app's current engine (the log as it is now).
            paths: the paths to start with (what the Paths view had typed).
        """
        super().__init__()
        self.root = root
        self.engine_source = engine_source
        self.initial_paths = paths
        #: The "did you mean" line on display ("" when the payload has no hints).
        self.hints_line = ""

    def compose(self) -> ComposeResult:
        """Two inputs, the equivalent command, and the payload."""
        with Vertical(id="agent-box"):
            yield Static(
                Text.assemble(
                    ("What an agent sees", "bold"),
                    (" · the exact bytes of the MCP recall tool", "dim"),
                )
            )
            yield Input(
                self.initial_paths,
                placeholder="file paths or globs, comma-separated "
                "(e.g. src/billing/pdf.go)",
                id="agent-paths",
            )
            yield Input(
                placeholder="topic in words (e.g. invoice rendering)", id="agent-topic"
            )
            yield Static(id="agent-command", markup=False)
            yield Static(id="agent-hints", markup=False)
            yield TextArea("", read_only=True, id="agent-json")
        yield KeyBar("agent")

    def on_mount(self) -> None:
        """Focus the paths box and show the unfiltered payload."""
        self.query_one("#agent-hints", Static).display = False
        self.query_one("#agent-paths", Input).focus()
        self._refresh()

    @on(Input.Changed)
    def _changed(self, _: Input.Changed) -> None:
        self._refresh()

    def _refresh(self) -> None:
        paths = self.query_one("#agent-paths", Input).value
        topic = self.query_one("#agent-topic", Input).value
        self.query_one("#agent-command", Static).update(
            plain(equivalent_command(self.root, paths, topic))
        )
        self._compute(paths, topic)

    @thread_worker("agent-recall")
    def _compute(self, paths: str, topic: str) -> None:
        engine = self.engine_source()
        if engine is not None:
            payload = agent_payload(engine, paths, topic)
        else:  # before the app's first load lands: the store as a read opens it
            from kgai_tui.core.model.read import read_store

            opened = read_store(self.root)
            try:
                payload = agent_payload(opened, paths, topic)
            finally:
                opened.close()
        if not get_current_worker().is_cancelled:  # a newer keystroke supersedes it
            self.app.call_from_thread(self._show, payload)

    def _show(self, payload: str) -> None:
        self.query_one("#agent-json", TextArea).load_text(payload)
        line = did_you_mean(payload)
        hints = self.query_one("#agent-hints", Static)
        hints.update(plain(line))  # element names: store text
        hints.display = bool(line)
        self.hints_line = line

    @property
    def payload(self) -> str:
        """The payload on display (tests read it)."""
        return self.query_one("#agent-json", TextArea).text
