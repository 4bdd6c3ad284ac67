"""QueryView: kg's read-only Cypher in the explorer, as ``kgai-tui query`` answers.

Type a query, Enter runs it (never a keystroke: a half-typed query is a syntax
error); the rows show in a table, keyed by the RETURN columns. Enter on a cell
holding an element or decision id opens it. The slider's moment applies: at now
the query runs on the graph stored beside the read model; at a past moment on
that moment's graph, built in memory. A few saved queries are in the palette
("query: ...").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static
from textual.worker import get_current_worker

from kgai_tui.ui.render import DIM
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import DecisionRequested, ElementRequested, Snapshot
from kgai_tui.ui.threads import thread_worker

#: At most this many rows in the table (the caption says how many more).
LIMIT: Final = 500
#: A cell shows at most this many characters.
CELL: Final = 60


@dataclass(frozen=True, slots=True)
class QueryResult:
    """What the view shows for one run: rows and columns, or an error."""

    cypher: str
    columns: list[str]
    rows: list[dict[str, Any]]
    dropped: int
    error: str = ""


def run(snapshot: Snapshot, cypher: str, database: Any = None) -> QueryResult:
    """Run a query for the snapshot (in a worker): on ``database`` (the moment's
    graph, built once per moment by the view), else on now's stored graph."""
    from kgai_tui.core.errors import KgaiError
    from kgai_tui.core.query.run import run_query

    try:
        got = run_query(snapshot.engine, cypher, database=database, limit=LIMIT)
    except KgaiError as exc:
        return QueryResult(cypher, [], [], 0, str(exc) or type(exc).__name__)
    return QueryResult(cypher, got.columns, got.rows, got.dropped)


def _cell(value: Any) -> Text:
    if value is None:
        return Text("null", DIM)
    if isinstance(value, str):
        return plain(one_line(value, CELL))
    from kgai_tui.core.gosem.gojson import marshal

    return plain(one_line(marshal(value).decode("utf-8", "replace"), CELL))


class QueryView(Vertical):
    """A Cypher box, a caption that says what the answer is, and the rows."""

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self.result: QueryResult | None = None
        self._generation = 0
        # The graph of the slider's moment, built once per snapshot revision.
        self._moment: tuple[int, Any] | None = None
        self._stale = False

    def compose(self) -> ComposeResult:
        """The box, the caption, the table."""
        yield Input(
            placeholder="Cypher, e.g. MATCH (e:Element) RETURN e.kind, count(*) AS n",
            id="query-input",
        )
        yield Static(id="query-caption")
        table: DataTable[Text] = DataTable(id="query-table", cursor_type="cell")
        yield table

    def on_mount(self) -> None:
        """Say what the view is for before anything runs."""
        self.query_one("#query-caption", Static).update(self._caption(None))

    def show(self, snapshot: Snapshot) -> None:
        """Keep the snapshot; run the shown query again when the data changed."""
        same = self.snapshot is not None and self.snapshot.revision == snapshot.revision
        self.snapshot = snapshot
        if not same and self.result is not None:
            # Only in front: a moment's graph is built for the query (a minute at a
            # million decisions), not for every slider step taken in another view.
            if self.display:
                self._start(self.result.cypher)
            else:
                self._stale = True

    def on_show(self) -> None:
        """Run the shown query again for the moment the slider moved to meanwhile."""
        if self._stale and self.result is not None:
            self._stale = False
            self._start(self.result.cypher)

    @on(Input.Submitted, "#query-input")
    def _submitted(self, event: Input.Submitted) -> None:
        """Enter in the box runs the query. The Input posts this after it has taken
        every key typed before Enter: a binding on the view would read the box
        first, and run half a query that was pasted or typed fast."""
        event.stop()
        self._start(event.value)

    def set_query(self, cypher: str) -> None:
        """Put a query in the box and run it (the palette's saved queries)."""
        box = self.query_one("#query-input", Input)
        box.value = cypher
        box.focus()
        self._start(cypher)

    def _start(self, cypher: str) -> None:
        if self.snapshot is None:
            return
        self._generation += 1
        if cypher.strip():
            self.query_one("#query-caption", Static).update(
                Text(
                    "running… (the first query after the log changed builds the graph)",
                    DIM,
                )
            )
        self._compute(self.snapshot, cypher, self._generation)

    def _moment_graph(self, snapshot: Snapshot) -> Any:
        """The graph of the snapshot's moment (None at now: the stored graph),
        built once per snapshot revision."""
        if snapshot.moment is None:
            return None
        if self._moment is not None and self._moment[0] == snapshot.revision:
            return self._moment[1]
        from kgai_tui.core.query.run import memory_graph

        if self._moment is not None:
            self._moment[1].close()
        self._moment = (snapshot.revision, memory_graph(snapshot.projection))
        return self._moment[1]

    @thread_worker("query")
    def _compute(self, snapshot: Snapshot, cypher: str, generation: int) -> None:
        if not cypher.strip():
            result = QueryResult(cypher, [], [], 0)
        else:
            result = run(snapshot, cypher, self._moment_graph(snapshot))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._present, snapshot, result, generation)

    def _present(
        self, snapshot: Snapshot, result: QueryResult, generation: int
    ) -> None:
        if generation != self._generation or snapshot is not self.snapshot:
            return
        self.result = result
        table: DataTable[Text] = self.query_one("#query-table", DataTable)
        table.clear(columns=True)
        for column in result.columns:
            table.add_column(plain(one_line(column, CELL)), key=column)
        for n, row in enumerate(result.rows):
            table.add_row(*(_cell(row.get(c)) for c in result.columns), key=str(n))
        self.query_one("#query-caption", Static).update(self._caption(result))
        if result.rows and self.screen.focused is self.query_one("#query-input", Input):
            table.focus()

    def _caption(self, result: QueryResult | None) -> Text:
        moment = (
            ""
            if self.snapshot is None or self.snapshot.moment is None
            else f" as of {self.snapshot.moment.strftime('%Y-%m-%d %H:%M')}"
        )
        if result is None or not result.cypher.strip():
            return Text(
                "Type read-only Cypher, enter runs it. Nodes Element(id, kind, name, "
                "props) and Decision(id, title, rationale, author, recorded_at, "
                "lamport, …); edges LINK, SHAPES(authority), SUPERSEDES. "
                "ctrl+p \u2192 \u201cquery:\u201d for saved queries.",
                DIM,
            )
        if result.error:
            return Text.assemble(
                ("the query did not run: ", "bold"), plain(one_line(result.error, 200))
            )
        if not result.rows:
            return Text(f"no rows{moment}: the query matched nothing", DIM)
        more = f", {result.dropped} more not shown" if result.dropped else ""
        return Text(
            f"{len(result.rows)} row(s){moment}{more} · enter on an id opens it",
            DIM,
        )

    @on(DataTable.CellSelected, "#query-table")
    def _open(self, event: DataTable.CellSelected) -> None:
        if self.snapshot is None:
            return
        value = event.value.plain if isinstance(event.value, Text) else str(event.value)
        p = self.snapshot.projection
        if p.has_element(value):
            self.post_message(ElementRequested(value))
            return
        index = self.snapshot.view.decision_index(value)
        if index is not None:
            self.post_message(DecisionRequested(index))
            return
        self.app.notify(
            "not an element or decision id; return e.id or d.id to open one",
            timeout=4,
        )
