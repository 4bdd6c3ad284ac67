"""What an MCP client sees before and around a call: described arguments, tool
titles and hints, a typed ``record`` schema, one sentence for a bad argument, and
the CLI's limits. Driven through the SDK's stdio client against a real server.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, Tool
from test_mcp import READ_TOOLS, WRITE_TOOLS, call_all, cli, text_of, with_server

from kgai_tui.core.write.ingest_input import DecisionInput, MutationInput, RefInput
from kgai_tui.demo import DEMO_STORE
from kgai_tui.mcp.args import SEARCH_LIMIT_MAX


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A private copy of the demo store."""
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    return target


# (tool, arguments, the whole answer)
BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("recall", {"max": 0}, "recall: max must be an integer of at least 1, not 0."),
    (
        "recall",
        {"max": "15"},
        'recall: max must be an integer of at least 1, not "15".',
    ),
    (
        "recall",
        {"paths": 42},
        "recall: paths must be a list of strings or a string, not 42.",
    ),
    (
        "recall",
        {"about": "invoices"},
        'recall: unknown argument "about"; its arguments: paths, topic and max.',
    ),
    (
        "search",
        {"query": "x", "limit": SEARCH_LIMIT_MAX + 1},
        f"search: limit must be an integer from 1 to {SEARCH_LIMIT_MAX}, "
        f"not {SEARCH_LIMIT_MAX + 1}.",
    ),
    (
        "search",
        {"query": "x", "include_all": "yes"},
        'search: include_all must be true or false, not "yes".',
    ),
    ("history", {}, "history: element is required."),
    (
        "history",
        {"element": ""},
        'history: element must be a non-empty string, not "".',
    ),
    ("status", {"verbose": True}, 'status: unknown argument "verbose"; it takes none.'),
    ("record", {"dry_run": 1}, "record: dry_run must be true or false, not 1."),
    ("record", {"decision": 3}, "record: decision must be an object, not 3."),
    (
        "record",
        {"decision": {"title": "x", "elements": ["a"]}},
        'record: unknown field "elements" in decision; its fields: title, rationale, '
        "author, date, refs, supersedes_on and mutations.",
    ),
    (
        "record",
        {"decisions": [{"title": "a"}, {}]},
        "record: decisions[1].title is required.",
    ),
    (
        "record",
        {"decision": {"title": "x", "mutations": [{"op": "upsert", "name": "A"}]}},
        'record: decision.mutations[0].op must be one of "upsert_element", '
        '"set_prop", "add_link" or "retire_link", not "upsert".',
    ),
    (
        "resolve_conflict",
        {"element": "service:Payments", "keep": 5, "title": 6},
        "resolve_conflict: keep must be a string, not 5 (and 1 more problem).",
    ),
]


def _properties(schema: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    """Every property of a schema, nested ones included, with its path."""
    for option in schema.get("anyOf", [schema]):
        for name, prop in option.get("properties", {}).items():
            yield f"{path}{name}", prop
            yield from _properties(prop, f"{path}{name}.")
        items = option.get("items")
        if isinstance(items, Mapping):
            yield from _properties(items, f"{path}[].")


def _record_fields(tool: Tool) -> dict[str, set[str]]:
    decision = next(
        o
        for o in tool.input_schema["properties"]["decision"]["anyOf"]
        if "properties" in o
    )
    mutation = decision["properties"]["mutations"]["items"]
    ref = decision["properties"]["refs"]["items"]
    return {
        "decision": set(decision["properties"]),
        "mutation": set(mutation["properties"]),
        "ref": set(ref["properties"]),
        "required": set(decision["required"]),
        "ops": set(mutation["properties"]["op"]["enum"]),
    }


def _one_sentence(result: CallToolResult) -> str:
    assert result.is_error
    text = text_of(result).decode()
    assert "\n" not in text and text.endswith("."), text
    for noise in ("Traceback", "validation error", "pydantic", "http", "Input should"):
        assert noise not in text, text
    return text


def test_tools_describe_every_argument_and_carry_titles_and_hints(store: Path) -> None:
    """Each tool: a title, read-only/closed-world hints, a description per argument."""

    async def steps(client: Client) -> list[Tool]:
        return (await client.list_tools()).tools

    tools = with_server(store, steps, allow_write=True)
    assert {t.name for t in tools} == READ_TOOLS | WRITE_TOOLS
    for tool in tools:
        hints = tool.annotations
        assert tool.title and hints is not None and hints.title == tool.title
        assert hints.open_world_hint is False, tool.name
        assert hints.read_only_hint is (tool.name in READ_TOOLS), tool.name
        if tool.name in WRITE_TOOLS:
            assert hints.destructive_hint is False, tool.name
        schema = tool.input_schema
        assert schema["additionalProperties"] is False, tool.name
        assert "$ref" not in json.dumps(schema), tool.name  # self-contained
        for path, prop in _properties(schema):
            assert prop.get("description"), (tool.name, path)

    record = next(t for t in tools if t.name == "record")
    fields = _record_fields(record)
    # Field for field the document `kgai-tui record` reads.
    assert fields["decision"] == {f.name for f in dataclasses.fields(DecisionInput)}
    assert fields["mutation"] == {
        "from" if f.name == "from_" else f.name
        for f in dataclasses.fields(MutationInput)
    }
    assert fields["ref"] == {f.name for f in dataclasses.fields(RefInput)}
    assert fields["required"] == {"title"}
    assert fields["ops"] == {"upsert_element", "set_prop", "add_link", "retire_link"}


def test_a_bad_argument_is_answered_with_one_sentence(store: Path) -> None:
    """Wrong types, ranges, names and shapes: one sentence naming the argument."""
    calls = [(name, args) for name, args, _ in BAD_CALLS]

    async def steps(client: Client) -> list[CallToolResult]:
        await client.list_tools()
        return await call_all(client, [*calls, ("status", {})])

    results = with_server(store, steps, allow_write=True)
    for (name, args, expected), result in zip(BAD_CALLS, results[:-1], strict=True):
        assert _one_sentence(result) == expected, (name, args)
    assert not results[-1].is_error  # and the server keeps answering


def test_the_limits_are_the_clis(store: Path) -> None:
    """``max`` has no upper bound and ``limit`` stops where ``search --limit`` does."""
    from kgai_tui.core.search.index import MAX_LIMIT

    assert SEARCH_LIMIT_MAX == MAX_LIMIT
    calls: list[tuple[str, dict[str, Any]]] = [
        ("recall", {"max": 100_000}),
        ("search", {"query": "invoice", "limit": SEARCH_LIMIT_MAX}),
    ]

    async def steps(client: Client) -> tuple[list[Tool], list[CallToolResult]]:
        return (await client.list_tools()).tools, await call_all(client, calls)

    tools, (recall, search) = with_server(store, steps)
    schemas = {t.name: t.input_schema["properties"] for t in tools}
    assert "maximum" not in schemas["recall"]["max"]
    assert schemas["recall"]["max"]["minimum"] == 1
    assert schemas["search"]["limit"]["maximum"] == SEARCH_LIMIT_MAX
    at = ["--store", str(store), "--json"]
    assert text_of(recall) == cli("context", "--max", "100000", *at).stdout
    limit = str(SEARCH_LIMIT_MAX)
    assert text_of(search) == cli("search", "--limit", limit, *at, "invoice").stdout
