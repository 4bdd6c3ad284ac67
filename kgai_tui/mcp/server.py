"""``kgai-tui mcp``: the decision memory as a stdio MCP server (official ``mcp`` SDK).

Every read tool calls the answer function the matching ``kgai-tui … --json`` command
calls (:mod:`kgai_tui.core.answers`) and returns its encoded bytes as text content. A failure is an
``isError`` result whose text is the CLI's ``{"error": …, "ok": false}`` bytes;
bad arguments (wrong types, out-of-range numbers, unknown names) are ``isError``
results from the SDK's validation, which is strict: ``dry_run: "yes"`` or ``1`` is
refused, not taken for true. A line that is not a JSON-RPC message at all gets a
JSON-RPC error from :mod:`kgai_tui.mcp.wire`. The server never exits on a bad call.

Writes (``record``, ``resolve_conflict``) are only offered with ``--allow-write``;
they go through the same locked write path as ``kgai-tui record``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, cast

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, Field, StrictBool

from kgai_tui import __version__
from kgai_tui.core import interrupts
from kgai_tui.core.answers.answer import Answer, encode, failure, failure_message
from kgai_tui.core.answers.kg import conflicts_answer, history_answer, status_answer
from kgai_tui.core.answers.moments import as_of_answer
from kgai_tui.core.answers.recall import recall_answer
from kgai_tui.core.answers.search import search_answer
from kgai_tui.core.errors import KgaiError, UsageError
from kgai_tui.core.interrupts import Interrupted
from kgai_tui.mcp import text as mcp_text
from kgai_tui.mcp.store import LiveStore

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True)
APPEND_ONLY = ToolAnnotations(read_only_hint=False, destructive_hint=False)

# Strict: pydantic's lax mode takes "yes", "on" and 1 for true and "15" for 15; an
# agent's mistaken type must come back as an error, not as a guess (docs/agents.md).
MaxItems = Annotated[int, Field(ge=1, le=500, strict=True)]
SearchLimit = Annotated[int, Field(ge=1, le=500, strict=True)]
NonEmpty = Annotated[str, Field(min_length=1)]


def _result(data: bytes, *, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=data.decode("utf-8"))],
        is_error=error,
    )


def answer(produce: Callable[[], Answer]) -> CallToolResult:
    """Run one tool body; turn kgai's errors into the CLI's failure JSON.

    Args:
        produce: computes the answer (or raises).

    Returns:
        The answer's bytes as text content; ``isError`` with ``{"error", "ok":
        false}`` when the core refused or the file system failed.
    """
    try:
        return _result(encode(produce()))
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
        paths: list[str] | str | None = None,
        topic: str = "",
        max: MaxItems = 15,
    ) -> CallToolResult:
        return answer(lambda: recall_answer(live.engine, paths or (), topic, max))

    def search(
        query: NonEmpty,
        limit: SearchLimit = 20,
        include_all: StrictBool = False,
        as_of: str | None = None,
    ) -> CallToolResult:
        return answer(
            lambda: search_answer(
                lambda _need_engine: live.search_index(),
                query,
                limit,
                include_all=include_all,
                as_of=as_of,
            )
        )

    def history(element: NonEmpty) -> CallToolResult:
        return answer(lambda: history_answer(live.engine, element))

    def conflicts(about: str = "") -> CallToolResult:
        return answer(lambda: conflicts_answer(live.engine, about))

    def as_of(timestamp: NonEmpty) -> CallToolResult:
        return answer(lambda: as_of_answer(live.engine, timestamp))

    def status() -> CallToolResult:
        return answer(lambda: status_answer(live.engine))

    return [
        (recall, mcp_text.RECALL),
        (search, mcp_text.SEARCH),
        (history, mcp_text.HISTORY),
        (conflicts, mcp_text.CONFLICTS),
        (as_of, mcp_text.AS_OF),
        (status, mcp_text.STATUS),
    ]


def write_tools(live: LiveStore) -> list[tuple[Callable[..., CallToolResult], str]]:
    """The write tools (only with ``--allow-write``), each with its description."""

    def record(
        decision: dict[str, Any] | None = None,
        decisions: list[dict[str, Any]] | None = None,
        dry_run: StrictBool = False,
    ) -> CallToolResult:
        def produce() -> Answer:
            from kgai_tui.core.write.writes import record as record_decisions

            if (decision is None) == (decisions is None):
                raise UsageError("give exactly one of decision or decisions")
            document: dict[str, Any] = (
                {"decision": decision}
                if decision is not None
                else {"decisions": decisions}
            )
            payload = json.dumps(document, ensure_ascii=False).encode("utf-8")
            obj = record_decisions(
                live.root, payload, dry_run=dry_run, on_notice=_notice
            )
            return Answer(obj)

        return answer(produce)

    def resolve_conflict(
        element: NonEmpty,
        keep: str | None = None,
        title: str | None = None,
        rationale: str = "",
    ) -> CallToolResult:
        def produce() -> Answer:
            from kgai_tui.core.write.writes import resolve_conflict as resolve

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


def strict_tool(
    fn: Callable[..., CallToolResult], description: str, annotations: ToolAnnotations
) -> Tool:
    """Build a tool whose arguments are validated strictly: unknown names are errors.

    The SDK ignores arguments it does not know; an agent that writes ``about``
    instead of ``topic`` would then get an unfiltered answer without noticing.
    """
    tool = Tool.from_function(
        fn, description=description, annotations=annotations, structured_output=False
    )
    base = tool.fn_metadata.arg_model
    strict = cast(
        type[ArgModelBase],
        type(
            base.__name__,
            (base,),
            {
                "model_config": ConfigDict(
                    extra="forbid", arbitrary_types_allowed=True
                ),
                "__module__": base.__module__,
            },
        ),
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def build_server(store: str | None = None, *, allow_write: bool = False) -> MCPServer:
    """Build the server over the store found from ``store`` (or by discovery).

    Args:
        store: the ``--store`` path, or ``None`` for ``KGAI_STORE``/the project.
        allow_write: also offer ``record`` and ``resolve_conflict``.
    """
    live = LiveStore(store)
    tools = [strict_tool(fn, text, READ_ONLY) for fn, text in read_tools(live)]
    if allow_write:
        tools += [strict_tool(fn, text, APPEND_ONLY) for fn, text in write_tools(live)]
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
