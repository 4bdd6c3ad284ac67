"""The MCP ``recall`` tool and its hints (issue 20): an agent's miss, its retry with
the first hint's name, and the hit, through a real server process; the tool's
description tells the agent to do exactly that."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from test_mcp import cli, text_of, with_server

from kgai_tui.demo import DEMO_STORE
from kgai_tui.mcp import text as mcp_text


@pytest.fixture
def store(tmp_path: Path) -> Path:
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    return target


def test_a_miss_a_retry_with_the_hint_and_a_hit(store: Path) -> None:
    async def steps(client: Client) -> tuple[bytes, bytes, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        miss = text_of(await client.call_tool("recall", {"topic": "message queue"}))
        hint = json.loads(miss)["hints"][0]["name"]
        hit = text_of(await client.call_tool("recall", {"topic": hint}))
        return miss, hit, tools["recall"].description

    miss, hit, description = with_server(store, steps)
    first = json.loads(miss)
    assert first["items"] == [] and first["total"] == 0
    # EventBus first (its decision says "queues"); WordNet's words for "message"
    # and "queue" reach others after it.
    assert (first["hints"][0]["kind"], first["hints"][0]["name"]) == (
        "infra",
        "EventBus",
    )
    second = json.loads(hit)
    assert second["items"][0]["name"] == "EventBus"
    assert any("Kafka" in w["title"] for w in second["items"][0]["why"])
    assert "hints" not in second
    # The same bytes as the CLI, hints included.
    args = ["--store", str(store), "--json"]
    assert miss == cli("context", "--about", "message queue", *args).stdout
    assert hit == cli("context", "--about", "EventBus", *args).stdout
    # The agent is told what hints are and to retry with the first one's name.
    assert description == mcp_text.RECALL
    assert "hints" in description and "first hint's `name`" in description
    assert "first hint's `name`" in mcp_text.INSTRUCTIONS


def test_an_answer_that_matched_has_no_hints(store: Path) -> None:
    async def steps(client: Client) -> bytes:
        return text_of(await client.call_tool("recall", {"topic": "invoice"}))

    answer = json.loads(with_server(store, steps))
    assert answer["total"] >= 3
    assert "hints" not in answer
