"""The MCP server, driven through the SDK's own stdio client against real processes.

Every tool answer must be byte-identical to the ``--json`` stdout of the real
``kgai-tui`` console script for the same query; bad arguments must come back as
``isError`` results while the server keeps answering; writes (``--allow-write``)
must leave the same log and print the same bytes as the CLI on an identical copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from kgai_tui.demo import DEMO_STORE

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")
NOW = "2026-06-01T12:00:00Z"
READ_TOOLS = {
    "recall", "search", "history", "conflicts", "as_of", "status", "people", "query"
}  # fmt: skip
WRITE_TOOLS = {"record", "resolve_conflict"}
PAYMENTS = "el_7afad531e3f0096a1da2"  # contested in the demo store
T = TypeVar("T")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A private copy of the demo store: 4 writers, 65 decisions, 2 conflicts."""
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    return target


def server_env() -> dict[str, str]:
    """What the server process gets: the isolated home and cache, a fixed clock."""
    return {
        "HOME": os.environ["HOME"],
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "KGAI_TUI_NOW": NOW,
    }


def cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """Run the real console script with the same environment as the server."""
    return subprocess.run(
        [KGAI_TUI, *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **server_env()},
        timeout=120,
        check=False,
    )


def cli_many(argvs: list[list[str]]) -> list[subprocess.CompletedProcess[bytes]]:
    """Run several read commands in parallel (they never write)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda argv: cli(*argv), argvs))


def with_server(
    store: Path,
    steps: Callable[[Client], Awaitable[T]],
    *,
    allow_write: bool = False,
) -> T:
    """Spawn ``python -m kgai_tui mcp --store STORE`` and run ``steps`` against it."""
    args = ["-m", "kgai_tui", "mcp", "--store", str(store)]
    if allow_write:
        args.append("--allow-write")
    params = StdioServerParameters(command=sys.executable, args=args, env=server_env())

    async def main() -> T:
        async with Client(params, read_timeout_seconds=120) as client:
            return await steps(client)

    return anyio.run(main)


def text_of(result: CallToolResult) -> bytes:
    """The single text block of a tool result, as bytes."""
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text.encode("utf-8")


async def call_all(
    client: Client, calls: list[tuple[str, dict[str, Any]]]
) -> list[CallToolResult]:
    """Call tools one after the other on one connection."""
    return [await client.call_tool(name, args) for name, args in calls]


# ---------------------------------------------------------------------------- reads

READ_CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("status", {}, ["status"]),
    ("people", {}, ["people"]),
    ("people", {"as_of": "2026-02-01"}, ["people", "--as-of", "2026-02-01"]),
    ("conflicts", {}, ["conflicts"]),
    ("conflicts", {"about": "pay"}, ["conflicts", "--about", "pay"]),
    (
        "conflicts",
        {"about": "nothing-like-it"},
        ["conflicts", "--about", "nothing-like-it"],
    ),
    ("recall", {}, ["context"]),
    (
        "recall",
        {"paths": ["services/billing/invoice/render.go", " web/checkout/x.ts "]},
        [
            "context",
            "--paths",
            "services/billing/invoice/render.go, web/checkout/x.ts ",
        ],
    ),
    (
        "recall",
        {"paths": "services/payments/*", "topic": "refunds and payments", "max": 3},
        [
            "context",
            "--paths",
            "services/payments/*",
            "--about",
            "refunds and payments",
            "--max",
            "3",
        ],
    ),
    ("recall", {"topic": "zzzz qqqq"}, ["context", "--about", "zzzz qqqq"]),
    ("history", {"element": "feature:Invoice"}, ["history", "feature:Invoice"]),
    ("history", {"element": PAYMENTS}, ["history", PAYMENTS]),
    ("as_of", {"timestamp": "2026-02-01"}, ["as-of", "2026-02-01"]),
    ("as_of", {"timestamp": "2026-03-15T10:30:00Z"}, ["as-of", "2026-03-15T10:30:00Z"]),
    # Failures: the CLI prints {"error", "ok": false} on stdout, the tool the same bytes.
    ("history", {"element": "feature:Nope"}, ["history", "feature:Nope"]),
    ("as_of", {"timestamp": "yesterday"}, ["as-of", "yesterday"]),
    (
        "query",
        {"cypher": "MATCH (e:Element) RETURN e.kind AS kind, count(*) AS n"},
        [
            "query",
            "--limit",
            "100",
            "MATCH (e:Element) RETURN e.kind AS kind, count(*) AS n",
        ],
    ),
    (
        "query",
        {
            "cypher": "MATCH (e:Element) RETURN e.name",
            "limit": 2,
            "as_of": "2026-02-01",
        },
        [
            "query",
            "--limit",
            "2",
            "--as-of",
            "2026-02-01",
            "MATCH (e:Element) RETURN e.name",
        ],
    ),
    ("query", {"cypher": "DROP TABLE Element"}, ["query", "DROP TABLE Element"]),
]

BAD_ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    ("recall", {"about": "invoices"}, "about"),  # unknown name: not silently ignored
    ("recall", {"max": 0}, "max"),
    ("recall", {"max": "many"}, "max"),
    ("recall", {"paths": 42}, "paths"),
    ("history", {}, "element"),
    ("history", {"element": ""}, "element"),
    ("history", {"element": ["a", "b"]}, "element"),
    ("conflicts", {"about": {"x": 1}}, "about"),
    ("as_of", {}, "timestamp"),
    ("status", {"verbose": True}, "verbose"),
    ("search", {}, "query"),
    ("search", {"query": "invoice", "limit": -1}, "limit"),
]


def test_read_tools_match_the_cli_byte_for_byte(store: Path) -> None:
    """Each read tool prints exactly what ``kgai-tui <command> --json`` prints."""
    calls = [(name, args) for name, args, _ in READ_CASES]

    async def steps(client: Client) -> tuple[set[str], list[CallToolResult]]:
        listed = await client.list_tools()
        return {t.name for t in listed.tools}, await call_all(client, calls)

    names, results = with_server(store, steps)
    assert names == READ_TOOLS
    expected = cli_many(
        [[*argv, "--store", str(store), "--json"] for *_, argv in READ_CASES]
    )
    for (name, args, argv), result, done in zip(
        READ_CASES, results, expected, strict=True
    ):
        assert text_of(result) == done.stdout, (name, args, argv, done.stderr)
        assert result.is_error == (done.returncode != 0), (name, args)
        assert json.loads(done.stdout)["ok"] is not result.is_error


def test_bad_arguments_are_tool_errors_and_the_server_keeps_answering(
    store: Path,
) -> None:
    """Wrong names, types and ranges give isError results; the next call still works."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, args, _ in BAD_ARGUMENTS:
        calls += [(name, args), ("status", {})]
    calls.append(("no_such_tool", {}))
    calls.append(("record", {"decision": {"title": "x"}}))  # not offered read-only

    async def steps(client: Client) -> list[CallToolResult]:
        await client.list_tools()
        return await call_all(client, [*calls, ("status", {})])

    results = with_server(store, steps)
    status = cli("status", "--store", str(store), "--json").stdout
    for i, (name, args, field) in enumerate(BAD_ARGUMENTS):
        bad, after = results[2 * i], results[2 * i + 1]
        assert bad.is_error, (name, args)
        assert field in text_of(bad).decode(), (name, args, text_of(bad))
        assert not after.is_error and text_of(after) == status
    assert results[-3].is_error and b"no_such_tool" in text_of(results[-3])
    assert results[-2].is_error and b"record" in text_of(results[-2])
    assert text_of(results[-1]) == status


def test_search_tool_matches_the_cli(store: Path) -> None:
    """``search`` prints what ``kgai-tui search --json`` prints (same index, same order)."""
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"query": "invoice"}, ["invoice"]),
        (
            {"query": "payments provider", "limit": 3},
            ["--limit", "3", "payments", "provider"],
        ),
        ({"query": "stripe", "include_all": True}, ["--all", "stripe"]),
        (
            {"query": "search", "as_of": "2026-02-01"},
            ["--as-of", "2026-02-01", "search"],
        ),
        ({"query": "the of and"}, ["the", "of", "and"]),  # nothing to search: hits null
        ({"query": "invoice", "as_of": "soon"}, ["--as-of", "soon", "invoice"]),
        # Forgiving search (issue 42): a compound typed in lower case, a typo with
        # its notes and did_you_mean, a slip in a filter: the same bytes.
        ({"query": "productsearch"}, ["productsearch"]),
        ({"query": "stripe webhok evnetbus"}, ["stripe", "webhok", "evnetbus"]),
        ({"query": "kind:foo invoice"}, ["kind:foo", "invoice"]),
    ]

    async def steps(client: Client) -> list[CallToolResult]:
        await client.list_tools()
        return await call_all(client, [("search", args) for args, _ in cases])

    results = with_server(store, steps)
    for (args, argv), result in zip(cases, results, strict=True):
        done = cli("search", "--store", str(store), "--json", *argv)
        assert text_of(result) == done.stdout, (args, done.stderr)
        assert result.is_error == (done.returncode != 0), args
    typo = json.loads(text_of(results[-2]))
    assert typo["did_you_mean"] == "stripe webhok eventbus"
    assert any("'evnetbus'; did you mean 'eventbus'?" in n for n in typo["notes"])
    assert "no element kind 'foo'" in json.loads(text_of(results[-1]))["notes"][0]


def test_the_server_sees_events_appended_while_it_runs(store: Path) -> None:
    """No restart needed: a decision recorded by someone else shows up in the next call."""
    doc = {
        "decision": {
            "title": "Receipts are e-mailed as PDF",
            "rationale": "customers asked",
            "mutations": [
                {"op": "upsert_element", "kind": "feature", "name": "Receipt"}
            ],
        }
    }

    async def steps(client: Client) -> tuple[bytes, bytes, bytes]:
        await client.list_tools()
        before = text_of(await client.call_tool("status", {}))
        done = await anyio.to_thread.run_sync(
            lambda: cli(
                "record",
                "--store",
                str(store),
                "--json",
                stdin=json.dumps(doc).encode(),
            )
        )
        assert done.returncode == 0, done.stderr
        after = text_of(await client.call_tool("status", {}))
        recall = text_of(await client.call_tool("recall", {"topic": "receipt"}))
        return before, after, recall

    before, after, recall = with_server(store, steps)
    assert json.loads(after)["events"] == json.loads(before)["events"] + 1
    assert after == cli("status", "--store", str(store), "--json").stdout
    assert b"Receipts are e-mailed as PDF" in recall


def test_a_missing_store_is_an_empty_answer_not_a_crash(tmp_path: Path) -> None:
    """Every read tool answers kg's empty result with its note, the bytes of the
    CLI's --json; the server stays up."""
    missing = tmp_path / "nowhere"

    async def steps(client: Client) -> list[CallToolResult]:
        await client.list_tools()
        return await call_all(client, [("status", {}), ("recall", {"topic": "x"})])

    results = with_server(missing, steps)
    expected = [
        cli("status", "--store", str(missing), "--json"),
        cli("context", "--about", "x", "--store", str(missing), "--json"),
    ]
    for result, want in zip(results, expected, strict=True):
        assert want.returncode == 0
        assert not result.is_error and text_of(result) == want.stdout
        assert b"no knowledge graph store at" in want.stdout


# ---------------------------------------------------------------------------- writes

DECISION = {
    "title": "Payments use Adyen for cards, Stripe for SEPA",
    "rationale": "split by method until the SEPA migration is done",
    "author": "mcp-test",
    "supersedes_on": ["service:Payments"],
    "mutations": [
        {
            "op": "set_prop",
            "element": "service:Payments",
            "key": "owner",
            "value": "ana",
        }
    ],
}
DECISIONS = [
    {
        "title": "Search ranks by margin <and> stock",
        "rationale": "business ask",
        "mutations": [
            {"op": "upsert_element", "kind": "feature", "name": "ProductSearch"},
            {
                "op": "upsert_element",
                "kind": "module",
                "name": "Ranker",
                "props": {"paths": "search/rank/*"},
            },
        ],
    },
    {
        "title": "Ranker is owned by search team",
        "mutations": [
            {
                "op": "set_prop",
                "element": "module:Ranker",
                "key": "owner",
                "value": "search",
            }
        ],
    },
]


def _log_bytes(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "log").iterdir())}


def test_write_tools_equal_the_cli_on_an_identical_copy(tmp_path: Path) -> None:
    """record and resolve_conflict via MCP on copy A, via the CLI on copy B: same bytes."""
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(DEMO_STORE, a)
    shutil.copytree(DEMO_STORE, b)
    head = json.loads(cli("conflicts", "--store", str(b), "--json").stdout)[
        "conflicts"
    ][1]
    keep = head["heads"][1]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("record", {"decision": DECISION, "dry_run": True}),
        (
            "resolve_conflict",
            {
                "element": "service:Payments",
                "title": "Adyen it is",
                "rationale": "signed",
            },
        ),
        ("resolve_conflict", {"element": head["element_id"], "keep": keep[:12]}),
        ("record", {"decision": DECISION}),
        ("record", {"decisions": DECISIONS}),
        ("record", {"decision": DECISION}),  # already recorded: a no-op with a warning
        # Refusals: the same failure bytes as the CLI.
        ("resolve_conflict", {"element": "service:Payments", "title": "again"}),
        ("resolve_conflict", {"element": "feature:Nope", "title": "x"}),
        (
            "resolve_conflict",
            {"element": "service:Payments", "keep": "d_x", "rationale": "r"},
        ),
        # Documents that fit the tool's schema but not the write path (a schema
        # misfit is an argument error instead: tests/test_mcp_schema.py).
        ("record", {"decision": {"title": "   ", "rationale": "blank title"}}),
        (
            "record",
            {"decision": {"title": "x", "mutations": [{"op": "set_prop", "key": "k"}]}},
        ),
    ]

    async def steps(client: Client) -> tuple[set[str], list[CallToolResult]]:
        listed = await client.list_tools()
        return {t.name for t in listed.tools}, await call_all(client, calls)

    names, results = with_server(a, steps, allow_write=True)
    assert names == READ_TOOLS | WRITE_TOOLS

    def via_cli(name: str, args: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
        store = ["--store", str(b), "--json"]
        if name == "record":
            doc = {k: v for k, v in args.items() if k != "dry_run"}
            dry = ["--dry-run"] if args.get("dry_run") else []
            return cli("record", *store, *dry, stdin=json.dumps(doc).encode())
        flags = [f"--{k}={v}" for k, v in args.items() if k != "element"]
        return cli("resolve-conflict", *store, *flags, args["element"])

    for (name, args), result in zip(calls, results, strict=True):
        done = via_cli(name, args)
        # Messages may name the store directory, the one thing that differs.
        got = text_of(result).replace(str(a).encode(), str(b).encode())
        assert got == done.stdout, (name, args, done.stderr)
        assert result.is_error == (done.returncode != 0), (name, args)
    assert _log_bytes(a) == _log_bytes(b)
    reads = [["conflicts"], ["export", "--canonical"]]
    assert [
        r.stdout for r in cli_many([[*r, "--store", str(a), "--json"] for r in reads])
    ] == [
        r.stdout for r in cli_many([[*r, "--store", str(b), "--json"] for r in reads])
    ]
    assert (
        json.loads(cli("conflicts", "--store", str(a), "--json").stdout)["count"] == 0
    )
