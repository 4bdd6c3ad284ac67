"""The MCP server's stdin, read through a guard that answers what the SDK would drop.

The SDK's stdio transport (``mcp`` 2.3.0) validates each line with pydantic and,
when that fails, passes the exception inward, where nothing answers it: malformed
JSON, invalid UTF-8, a 100000-deep nesting, ``params`` given as a list or an id of
the wrong type got no reply at all, and the client waited forever. Every line now
goes through :class:`WireGuard` first. It reads lines of bounded size, parses them
with bounded depth, checks the JSON-RPC envelope and the SDK's own message schema,
and answers a bad one itself with one JSON-RPC error: -32700 (parse error) when the
line is not JSON it will read, -32600 (invalid request) when it is JSON but not a
message, -32602 (invalid params) when ``params`` is not an object. The id is the
message's own when it has a usable one (a string or an integer), else ``null``; a
bad notification (no id) is only logged, since JSON-RPC forbids answering one.
Lines that pass are handed to the SDK unchanged, so nothing a client sends can end
the server or leave it silent.

The replies go out through the SDK's own write stream, so they never interleave
with its answers on stdout.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NoReturn, cast

import anyio
import anyio.to_thread
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["MAX_DEPTH", "MAX_LINE_BYTES", "Refusal", "WireGuard", "check_line"]

#: A record document may be 64 MiB; its JSON-RPC envelope escapes some characters.
MAX_LINE_BYTES: Final = 96 << 20
#: Deeper JSON is refused before the SDK sees it (its parser gives up near 200; a
#: record document needs about ten levels).
MAX_DEPTH: Final = 128
_CHUNK: Final = 1 << 16


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a line is not passed on, and the JSON-RPC error that answers it.

    ``answer`` is false for a notification (a message with a method and no id):
    JSON-RPC forbids replying to one, so it is only logged.
    """

    code: int
    message: str
    id: int | str | None = None
    answer: bool = True

    def reply(self) -> JSONRPCError:
        """The JSON-RPC error object sent back."""
        return JSONRPCError(
            jsonrpc="2.0",
            id=self.id,
            error=ErrorData(code=self.code, message=self.message),
        )


_OVERSIZE: Final = Refusal(
    INVALID_REQUEST, f"message larger than {MAX_LINE_BYTES >> 20} MiB; not read"
)


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether containers nest more than ``limit`` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _parse(raw: bytes) -> Any:
    """The JSON value of a line, or the :class:`Refusal` answering it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refusal(PARSE_ERROR, f"parse error: not UTF-8 (byte {exc.start})")
    if not text.strip():
        return Refusal(PARSE_ERROR, "parse error: an empty line is not a message")
    too_deep = Refusal(PARSE_ERROR, f"parse error: nested deeper than {MAX_DEPTH}")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        return too_deep
    except ValueError as exc:
        return Refusal(PARSE_ERROR, f"parse error: {exc}")
    if isinstance(value, dict | list) and _deeper_than(value, MAX_DEPTH):
        return too_deep
    return value


def _envelope(value: Any) -> Refusal | None:
    """Check the JSON-RPC 2.0 envelope the SDK's schema is lenient about."""
    if isinstance(value, list):
        return Refusal(INVALID_REQUEST, "invalid request: batches are not supported")
    if not isinstance(value, dict):
        return Refusal(INVALID_REQUEST, "invalid request: a message is a JSON object")
    raw_id = value.get("id")
    if "id" in value and type(raw_id) not in (int, str):
        # An id of true or 1.5 made the SDK take the request for a notification.
        return Refusal(
            INVALID_REQUEST, "invalid request: id must be a string or integer"
        )
    msg_id = cast("int | str | None", raw_id)
    notice = "method" in value and "id" not in value
    if value.get("jsonrpc") != "2.0":
        return Refusal(
            INVALID_REQUEST,
            'invalid request: "jsonrpc" must be "2.0"',
            msg_id,
            not notice,
        )
    if "method" in value:
        if not isinstance(value["method"], str):
            return Refusal(
                INVALID_REQUEST,
                "invalid request: method must be a string",
                msg_id,
                not notice,
            )
        params = value.get("params")
        if params is not None and not isinstance(params, dict):
            return Refusal(
                INVALID_PARAMS,
                f"invalid params: params must be an object, not {type(params).__name__}",
                msg_id,
                not notice,
            )
    elif "result" not in value and "error" not in value:
        return Refusal(
            INVALID_REQUEST, "invalid request: no method, result or error", msg_id
        )
    return None


def check_line(raw: bytes) -> str | Refusal:
    """The text to hand to the SDK, or the refusal that answers this line.

    A line that passes is one the SDK's own ``validate_json`` accepts, so it is
    certain to be served (and answered) rather than dropped.
    """
    value = _parse(raw)
    if isinstance(value, Refusal):
        return value
    refused = _envelope(value)
    if refused is not None:
        return refused
    text = raw.decode("utf-8")
    try:
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][1:]) or "message"
        notice = "method" in value and "id" not in value
        return Refusal(
            INVALID_REQUEST,
            f"invalid request: {where}: {first['msg']}",
            value.get("id"),
            not notice,
        )
    return text


class WireGuard:
    """Stdin as the SDK's transport iterates it: only lines it will serve.

    ``async for`` yields the text of each acceptable line; every other line is
    answered (once :meth:`attach` has given the SDK's write stream) and skipped.
    """

    def __init__(self, fd: int) -> None:
        """Read from ``fd`` (the wire; the caller keeps it open)."""
        self._fd = fd
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no newline
        self._skipping = False  # inside an oversize line, dropping it
        self._eof = False
        self._replies: Any = None
        self._attached = anyio.Event()

    def attach(self, replies: Any) -> None:
        """Give the stream that error replies are sent on (the SDK's write stream)."""
        self._replies = replies
        self._attached.set()

    def __aiter__(self) -> WireGuard:
        """Iterate lines, as the SDK does over a text file."""
        return self

    async def __anext__(self) -> str:
        """The next line the SDK will accept; error replies for the others."""
        while True:
            raw = await self._next_line()
            verdict = _OVERSIZE if raw is None else check_line(raw)
            if isinstance(verdict, str):
                return verdict
            await self._refuse(verdict)

    async def _next_line(self) -> bytes | None:
        """The next line without its newline; ``None`` for one over the size cap.

        Raises:
            StopAsyncIteration: the client closed stdin.
        """
        while True:
            at = self._buf.find(b"\n", self._scanned)
            if at >= 0:
                line = bytes(self._buf[:at]).removesuffix(b"\r")
                del self._buf[: at + 1]
                self._scanned = 0
                if self._skipping:
                    self._skipping = False
                    return None
                return line
            self._scanned = len(self._buf)
            if len(self._buf) > MAX_LINE_BYTES:
                self._buf.clear()
                self._scanned = 0
                self._skipping = True
            if self._eof:
                break
            chunk = await anyio.to_thread.run_sync(os.read, self._fd, _CHUNK)
            if chunk:
                self._buf += chunk
            else:
                self._eof = True
        # End of input: a last line without its newline is still a message.
        if self._skipping:
            self._skipping = False
            return None
        if self._buf.strip():
            line = bytes(self._buf)
            self._buf.clear()
            return line
        raise StopAsyncIteration

    async def _refuse(self, refusal: Refusal) -> None:
        print(f"kgai-tui: mcp: {refusal.message}", file=sys.stderr, flush=True)
        if not refusal.answer:
            return
        await self._attached.wait()
        # A closed stream means the server is shutting down: nobody to answer.
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._replies.send(SessionMessage(refusal.reply()))


async def serve_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdin/stdout with every line checked by :class:`WireGuard`.

    As the SDK does for the stdout it claims, fd 0 points at the null device while
    serving, so nothing a tool runs can read the wire; the wire is read from a
    private duplicate and restored at the end. This is ``MCPServer.run_stdio_async``
    with the guard in front of the SDK's reader.
    """
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    os.dup2(null, 0)
    os.close(null)
    guard = WireGuard(wire)
    lowlevel = server._lowlevel_server  # the SDK's own stdio runner uses it too
    try:
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", guard)) as (
            read_stream,
            write_stream,
        ):
            guard.attach(write_stream)
            await lowlevel.run(
                read_stream, write_stream, lowlevel.create_initialization_options()
            )
    finally:
        os.dup2(wire, 0)
        os.close(wire)
