"""``kgai-tui mcp``: the decision memory as a stdio MCP server (official ``mcp`` SDK).

Every read tool calls the answer function the matching ``kgai-tui … --json`` command
calls (:mod:`kgai_tui.core.answers`) and returns its encoded bytes as text content. A failure is an
``isError`` result whose text is the CLI's ``{"error": …, "ok": false}`` bytes;
bad arguments (wrong types, out-of-range numbers, unknown names) are ``isError``
results of one sentence (:mod:`kgai_tui.mcp.arg_errors`), checked strictly against
each tool's described schema (:mod:`kgai_tui.mcp.args`): ``dry_run: "yes"`` or
``1`` is refused, not taken for true. A line that is not a JSON-RPC message at all
gets a JSON-RPC error from :mod:`kgai_tui.mcp.wire`. The server never exits on a
bad call.

Writes (``record``, ``resolve_conflict``) are only offered with ``--allow-write``;
they go through the same locked write path as ``kgai-tui record``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from kgai_tui import __version__
from kgai_tui.core import interrupts
from kgai_tui.core.answers.answer import (
    Answer,
    encode,
    failure,
    failure_message,
    with_pending,
)
from kgai_tui.core.answers.config import pending_path
from kgai_tui.core.answers.kg import conflicts_answer, history_answer, status_answer
from kgai_tui.core.answers.moments import as_of_answer
from kgai_tui.core.answers.no_store import no_store_answer
from kgai_tui.core.answers.people import people_answer
from kgai_tui.core.answers.recall import recall_answer
from kgai_tui.core.answers.search import search_answer
from kgai_tui.core.errors import KgaiError, StoreNotFoundError, UsageError
from kgai_tui.core.interrupts import Interrupted
from kgai_tui.core.store.discovery import StoreLocation
from kgai_tui.mcp import text as mcp_text
from kgai_tui.mcp.args import (
    About,
    AsOf,
    ConflictElement,
    Cypher,
    Decisions,
    DryRun,
    Element,
    IncludeAll,
    Keep,
    MaxItems,
    OneDecision,
    Paths,
    Query,
    QueryLimit,
    Rationale,
    SearchLimit,
    Timestamp,
    Title,
    Topic,
)
from kgai_tui.mcp.record_doc import ingest_payload
from kgai_tui.mcp.store import LiveStore
from kgai_tui.mcp.tool import READ_ONLY, WRITE, make_tool


def _result(data: bytes, *, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=data.decode("utf-8"))],
        is_error=error,
    )


def answer(produce: Callable[[], Answer], command: str = "") -> CallToolResult:
    """Run one tool body; turn kgai's errors into the CLI's failure JSON.

    Args:
        produce: computes the answer (or raises).

    Returns:
        The answer's bytes as text content; ``isError`` with ``{"error", "ok":
        false}`` when the core refused or the file system failed.
    """
    try:
        return _result(encode(with_pending(produce(), pending_path())))
    except StoreNotFoundError as exc:
        # kg's convention for a read with nothing recorded: an ordinary empty
        # answer with a note (the CLI's --json prints the same bytes).
        empty = None
        if isinstance(exc.location, StoreLocation):
            empty = no_store_answer(command, exc.location)
        if empty is not None:
            return _result(encode(with_pending(empty, pending_path())))
        return _result(encode(failure(failure_message(exc))), error=True)
    except (KgaiError, OSError) as exc:
        return _result(encode(failure(failure_message(exc))), error=True)
    except Interrupted as exc:
        # The server is being stopped (SIGTERM, SIGHUP) while a batch was being
        # appended: it is whole or rolled back, and the process ends right after.
        return _result(encode(failure(failure_message(exc))), error=True)


def _notice(message: str) -> None:
    print(f"kgai-tui: note: {message}", file=sys.stderr, flush=True)


def read_tools(live: LiveStore) -> list[tuple[Callable[..., CallToolResult], str]]:
    """The read tools, each paired with its description."""

    def recall(
        paths: Paths = None,
        topic: Topic = "",
        max: MaxItems = 15,
    ) -> CallToolResult:
        return answer(
            lambda: recall_answer(live.model, paths or (), topic, max), "context"
        )

    def search(
        query: Query,
        limit: SearchLimit = 20,
        include_all: IncludeAll = False,
        as_of: AsOf = None,
    ) -> CallToolResult:
        return answer(
            lambda: search_answer(
                lambda _need_engine: live.search_index(),
                query,
                limit,
                include_all=include_all,
                as_of=as_of,
            ),
            "search",
        )

    def history(element: Element) -> CallToolResult:
        return answer(lambda: history_answer(live.model, element), "history")

    def conflicts(about: About = "") -> CallToolResult:
        return answer(lambda: conflicts_answer(live.model, about), "conflicts")

    def as_of(timestamp: Timestamp) -> CallToolResult:
        return answer(lambda: as_of_answer(live.model, timestamp), "as-of")

    def status() -> CallToolResult:
        return answer(lambda: status_answer(live.model), "status")

    def people(as_of: AsOf = None) -> CallToolResult:
        return answer(lambda: people_answer(live.model, as_of or ""))

    def query(
        cypher: Cypher, limit: QueryLimit = 100, as_of: AsOf = None
    ) -> CallToolResult:
        def produce() -> Answer:
            from kgai_tui.core.answers.query import query_answer

            return query_answer(live.model, cypher, as_of=as_of, limit=limit)

        return answer(produce, "query")

    return [
        (recall, mcp_text.RECALL),
        (search, mcp_text.SEARCH),
        (history, mcp_text.HISTORY),
        (conflicts, mcp_text.CONFLICTS),
        (as_of, mcp_text.AS_OF),
        (status, mcp_text.STATUS),
        (people, mcp_text.PEOPLE),
        (query, mcp_text.QUERY),
    ]


def write_tools(live: LiveStore) -> list[tuple[Callable[..., CallToolResult], str]]:
    """The write tools (only with ``--allow-write``), each with its description."""

    def record(
        decision: OneDecision = None,
        decisions: Decisions = None,
        dry_run: DryRun = False,
    ) -> CallToolResult:
        def produce() -> Answer:
            from kgai_tui.core.write.writes import record as record_decisions

            if (decision is None) == (decisions is None):
                raise UsageError("give exactly one of decision or decisions")
            payload = ingest_payload(decision, decisions)
            obj = record_decisions(
                live.root, payload, dry_run=dry_run, on_notice=_notice
            )
            return Answer(obj)

        return answer(produce)

    def resolve_conflict(
        element: ConflictElement,
        keep: Keep = None,
        title: Title = None,
        rationale: Rationale = "",
    ) -> CallToolResult:
        def produce() -> Answer:
            from kgai_tui.core.write.resolve import resolve_conflict as resolve

            if rationale and title is None:
                raise UsageError(
                    "--rationale goes with --title (--keep restates the kept one)"
                )
            obj = resolve(
                live.root,
                element,
                keep=keep,
                title=title,
                rationale=rationale,
                on_notice=_notice,
            )
            return Answer(obj)

        return answer(produce)

    return [(record, mcp_text.RECORD), (resolve_conflict, mcp_text.RESOLVE_CONFLICT)]


def build_server(store: str | None = None, *, allow_write: bool = False) -> MCPServer:
    """Build the server over the store found from ``store`` (or by discovery).

    Args:
        store: the ``--store`` path, or ``None`` for ``KGAI_STORE``/the project.
        allow_write: also offer ``record`` and ``resolve_conflict``.
    """
    live = LiveStore(store)
    offered = [(spec, READ_ONLY) for spec in read_tools(live)]
    if allow_write:
        offered += [(spec, WRITE) for spec in write_tools(live)]
    tools = [
        make_tool(
            fn,
            title=mcp_text.TITLES[fn.__name__],
            description=text,
            annotations=annotations,
        )
        for (fn, text), annotations in offered
    ]
    return MCPServer(
        name="kgai",
        title="kgai decision memory",
        instructions=mcp_text.INSTRUCTIONS,
        version=__version__,
        tools=tools,
        log_level="WARNING",
    )


def serve(store: str | None = None, *, allow_write: bool = False) -> None:
    """Run the server on stdin/stdout until the client closes the connection.

    Every line is checked before the SDK sees it (:mod:`kgai_tui.mcp.wire`), and
    SIGTERM/SIGHUP wait for a batch being appended by a write tool, so stopping the
    server never leaves part of a batch.
    """
    import anyio

    from kgai_tui.mcp.wire import serve_stdio

    server = build_server(store, allow_write=allow_write)
    interrupts.install()
    anyio.run(serve_stdio, server)
