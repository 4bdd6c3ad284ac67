"""Issue 15 point 8: a hostile MCP client gets JSON-RPC errors, never silence or a crash.

A raw subprocess writes bytes to ``kgai-tui mcp`` over stdio: malformed JSON,
invalid UTF-8 and 100000-deep nesting get a parse error (-32700, id null); messages
that are JSON but not a request (``params`` as a list, a batch, no method) get an
invalid-request or invalid-params error carrying their id when they have a usable
one; a non-boolean ``dry_run`` is an ``isError`` tool result. After every one of
them the server answers the next valid request. A real MCP client over stdio sees
the same refusals for ``dry_run``.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from kgai_tui.demo import DEMO_STORE

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def _env() -> dict[str, str]:
    return {
        "HOME": os.environ["HOME"],
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "KGAI_TUI_NOW": "2026-06-01T12:00:00Z",
    }


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A private copy of the demo store."""
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    return target


def _log(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((store / "log").iterdir())}


class RawServer:
    """``kgai-tui mcp --allow-write`` driven by raw lines on its stdin."""

    def __init__(self, store: Path) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kgai_tui",
                "mcp",
                "--store",
                str(store),
                "--allow-write",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_env(),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.next_id = 1000

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout} s") from None
        reply = json.loads(line)
        assert isinstance(reply, dict), line
        return reply

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": self.next_id,
                    "method": method,
                    "params": params,
                }
            ).encode()
        )
        reply = self.receive()
        assert reply.get("id") == self.next_id, reply
        return reply

    def initialize(self) -> None:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "1"},
            },
        )
        assert "result" in reply, reply
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def still_serving(self) -> None:
        reply = self.request("tools/call", {"name": "status", "arguments": {}})
        assert reply["result"]["isError"] is False, reply
        assert json.loads(reply["result"]["content"][0]["text"])["ok"] is True

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        err = self.proc.stderr.read().decode("utf-8", "replace")
        assert code == 0, (code, err)
        return err


def _call(req_id: int, name: str, arguments: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": req_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    ).encode()


DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_IN_REQUEST = (
    b'{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"status",'
    b'"arguments":{"x":' + DEEP + b"}}}"
)

# (raw line, expected code, expected id)
PROTOCOL_CASES: list[tuple[bytes, int, Any]] = [
    (b"{not json", PARSE_ERROR, None),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', PARSE_ERROR, None),
    (b"\xff\xfe{}", PARSE_ERROR, None),
    (
        b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\xc3"}}',
        PARSE_ERROR,
        None,
    ),
    (DEEP, PARSE_ERROR, None),
    (DEEP_IN_REQUEST, PARSE_ERROR, None),
    (b'{"a":' * 50_000 + b"1" + b"}" * 50_000, PARSE_ERROR, None),
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":["status"]}', None, 4),
    (b'{"jsonrpc":"2.0","id":"s4","method":"ping","params":[1,2]}', None, "s4"),
    (b"[]", INVALID_REQUEST, None),
    (b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]', INVALID_REQUEST, None),
    (b"123", INVALID_REQUEST, None),
    (b"null", INVALID_REQUEST, None),
    (b'"ping"', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":5}', INVALID_REQUEST, 5),
    (b'{"jsonrpc":"1.0","id":6,"method":"ping"}', INVALID_REQUEST, 6),
    (b'{"id":7,"method":"ping"}', INVALID_REQUEST, 7),
    (b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":8,"method":42}', INVALID_REQUEST, 8),
    (b"   ", PARSE_ERROR, None),
    (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":NaN}}', PARSE_ERROR, None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
    (b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":7}}', None, 10),
]

# Refused without a reply (JSON-RPC never answers a notification), then still serving.
SILENT_CASES = [
    b'{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}',
]


def test_malformed_messages_get_json_rpc_errors_and_the_server_keeps_serving(
    store: Path,
) -> None:
    """Each bad line: one error reply with the right code and id, then a valid call."""
    server = RawServer(store)
    try:
        server.initialize()
        server.still_serving()
        for raw, code, req_id in PROTOCOL_CASES:
            server.send(raw)
            reply = server.receive()
            context = (raw[:60], reply)
            assert reply.get("jsonrpc") == "2.0" and "result" not in reply, context
            assert reply["id"] == req_id, context
            if code is None:
                assert reply["error"]["code"] in (INVALID_PARAMS, INVALID_REQUEST), (
                    context
                )
            else:
                assert reply["error"]["code"] == code, context
            assert reply["error"]["message"], context
            server.still_serving()
        for raw in SILENT_CASES:
            server.send(raw)
            server.still_serving()  # the next reply is the status call's own
        # Nesting within the bound is served as usual: an unknown argument, refused
        # by the tool's own validation.
        nested = b"[" * 100 + b"]" * 100
        server.send(
            b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":'
            b'"status","arguments":{"x":' + nested + b"}}}"
        )
        reply = server.receive()
        assert reply["id"] == 11 and reply["result"]["isError"] is True, reply
        server.still_serving()
    finally:
        err = server.close()
    assert "Traceback" not in err, err


NOT_BOOLEANS: list[Any] = ["yes", "true", 1, 0, None, "", [], {}]


def test_a_non_boolean_dry_run_is_refused_over_raw_stdio(store: Path) -> None:
    """``dry_run`` must be a JSON boolean: anything else is an isError result."""
    before = _log(store)
    server = RawServer(store)
    try:
        server.initialize()
        for i, value in enumerate(NOT_BOOLEANS):
            for tool, args in (
                ("record", {"decision": {"title": f"raw dry {i}"}}),
                ("search", {"query": "invoice"}),
            ):
                key = "dry_run" if tool == "record" else "include_all"
                server.send(_call(500 + i, tool, {**args, key: value}))
                reply = server.receive()
                context = (tool, value, reply)
                assert reply["id"] == 500 + i, context
                assert reply["result"]["isError"] is True, context
                assert key in reply["result"]["content"][0]["text"], context
            server.still_serving()
    finally:
        err = server.close()
    assert "Traceback" not in err, err
    assert _log(store) == before, "a refused call wrote to the log"


def test_a_real_client_sees_the_same_refusals(store: Path) -> None:
    """The SDK's own stdio client: valid calls answer; a string dry_run is refused."""
    before = _log(store)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kgai_tui", "mcp", "--store", str(store), "--allow-write"],
        env=_env(),
    )
    decision = {"title": "client dry run"}

    async def main() -> list[tuple[bool, str]]:
        out: list[tuple[bool, str]] = []
        async with Client(params, read_timeout_seconds=60) as client:
            for name, args in (
                ("status", {}),
                ("record", {"decision": decision, "dry_run": "yes"}),
                ("record", {"decision": decision, "dry_run": 1}),
                ("record", {"decision": decision, "dry_run": True}),
                ("conflicts", {}),
            ):
                result = await client.call_tool(name, args)
                block = result.content[0]
                assert isinstance(block, TextContent)
                out.append((result.is_error, block.text))
        return out

    answers = anyio.run(main)
    assert answers[0][0] is False
    assert answers[1][0] is True and "dry_run" in answers[1][1]
    assert answers[2][0] is True and "dry_run" in answers[2][1]
    assert answers[3][0] is False and json.loads(answers[3][1])["dry_run"] is True
    assert answers[4][0] is False
    assert _log(store) == before
