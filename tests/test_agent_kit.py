"""``kgai-tui agent kit`` and ``agent check`` (issue 44).

The Claude Code plugin folder passes the check written from the plugin and hook
documentation, every rule of that check catches its own broken folder, an MCP client
started from the generated ``.mcp.json`` entry answers ``recall`` on the demo store,
and nothing is written outside the named directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from kgai_tui.core.agents.kit import claude_plugin
from kgai_tui.core.agents.kit_check import check_plugin
from kgai_tui.demo import DEMO_STORE

KGAI = [sys.executable, "-m", "kgai_tui"]
COMMAND = f"{sys.executable} -m kgai_tui"
FILES = [
    ".claude-plugin/marketplace.json",
    ".claude-plugin/plugin.json",
    ".mcp.json",
    "commands/kgai-ask.md",
    "commands/kgai-conflicts.md",
    "commands/kgai-decision.md",
    "commands/kgai-history.md",
    "commands/kgai-review.md",
    "commands/kgai-sync.md",
    "commands/kgai-trust.md",
    "hooks/hooks.json",
    "skills/kgai/SKILL.md",
]


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*KGAI, *args], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    repo = tmp_path / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    shutil.copytree(DEMO_STORE, repo / ".kgai" / "store")
    return repo


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()
    )


def test_the_claude_kit_writes_a_plugin_that_checks(shop: Path, tmp_path: Path) -> None:
    target = tmp_path / "plugins" / "kgai"
    home = Path(os.environ["HOME"])
    home_before = _files(home)
    done = _run(shop, "agent", "kit", "claude", str(target), "--command", COMMAND)
    assert done.returncode == 0, done.stderr
    assert _files(target) == FILES
    assert check_plugin(target) == []
    assert _run(shop, "agent", "check", str(target)).returncode == 0
    server = json.loads((target / ".mcp.json").read_text())["mcpServers"]["kgai"]
    assert server == {
        "command": sys.executable,
        "args": ["-m", "kgai_tui", "mcp", "--allow-write"],
        "env": {"KGAI_PROJECT": str(shop.resolve())},
    }
    # Written again: the same bytes (a kit folder may be refreshed in place).
    before = {name: (target / name).read_bytes() for name in FILES}
    assert _run(shop, "agent", "kit", "claude", str(target), "--command", COMMAND)
    assert {name: (target / name).read_bytes() for name in FILES} == before
    # Nothing written beside it, in the project or in HOME.
    assert sorted(p.name for p in (tmp_path / "plugins").iterdir()) == ["kgai"]
    assert not (shop / ".claude").exists()
    assert _files(home) == home_before


def test_an_mcp_client_started_from_the_kit_entry_answers_recall(
    shop: Path, tmp_path: Path
) -> None:
    target = tmp_path / "plugin"
    assert (
        _run(
            shop, "agent", "kit", "claude", str(target), "--command", COMMAND
        ).returncode
        == 0
    )
    entry = json.loads((target / ".mcp.json").read_text())["mcpServers"]["kgai"]
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={
            "HOME": os.environ["HOME"],
            "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
            **entry["env"],
        },
        cwd=str(tmp_path),  # elsewhere: the entry's KGAI_PROJECT finds the store
    )

    async def main() -> tuple[list[str], dict[str, Any]]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("recall", {"topic": "invoice"})
            block = result.content[0]
            assert isinstance(block, TextContent)
            return tools, json.loads(block.text)

    tools, answer = anyio.run(main)
    assert "record" in tools, "the kit turns record on for its project"
    assert answer["ok"] is True
    assert "Invoice" in [item["name"] for item in answer["items"]]


def test_a_folder_that_is_not_a_kit_is_never_written_into(
    shop: Path, tmp_path: Path
) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    done = _run(shop, "agent", "kit", "claude", str(foreign))
    assert done.returncode == 2
    assert "is not empty and holds no kgai-tui kit" in done.stderr
    assert _files(foreign) == ["notes.txt"]
    # A symlink inside an earlier kit is not followed.
    kit = tmp_path / "kit"
    assert _run(shop, "agent", "kit", "claude", str(kit)).returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(kit / "hooks")
    (kit / "hooks").symlink_to(outside)
    done = _run(shop, "agent", "kit", "claude", str(kit))
    assert done.returncode == 2 and "is a symlink" in done.stderr
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("agent", ["codex", "cursor", "zed", "agents-md"])
def test_agents_without_plugins_get_what_to_paste(
    shop: Path, tmp_path: Path, agent: str
) -> None:
    before = _files(tmp_path)
    done = _run(shop, "agent", "kit", agent, "--command", COMMAND)
    assert done.returncode == 0, done.stderr
    assert "## Decision memory (kgai)" in done.stdout
    assert "DO NOT record: bug fixes" in done.stdout
    if agent != "agents-md":
        assert '"--allow-write"' in done.stdout
        assert str(shop.resolve()) in done.stdout
    assert _files(tmp_path) == before, "nothing is written"
    refused = _run(shop, "agent", "kit", agent, str(tmp_path / "x"))
    assert refused.returncode == 2 and not (tmp_path / "x").exists()


def _broken(tmp_path: Path, name: str, edit: Any) -> list[str]:
    root = tmp_path / name
    for rel, text in claude_plugin(["kgai-tui"], tmp_path).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    edit(root)
    return check_plugin(root)


def _json_edit(rel: str, change: Any) -> Any:
    def edit(root: Path) -> None:
        obj = json.loads((root / rel).read_text())
        change(obj)
        (root / rel).write_text(json.dumps(obj))

    return edit


CASES = [
    (
        "name",
        _json_edit(".claude-plugin/plugin.json", lambda o: o.update(name="Kgai TUI")),
        "name must be kebab-case",
    ),
    (
        "version",
        _json_edit(".claude-plugin/plugin.json", lambda o: o.update(version="one")),
        "version must be semantic",
    ),
    (
        "event",
        _json_edit("hooks/hooks.json", lambda o: o["hooks"].update(AfterLunch=[])),
        "unknown hook event 'AfterLunch'",
    ),
    (
        "matcher",
        _json_edit(
            "hooks/hooks.json", lambda o: o["hooks"]["Stop"][0].update(matcher="Edit")
        ),
        "Stop takes no matcher",
    ),
    (
        "type",
        _json_edit(
            "hooks/hooks.json",
            lambda o: o["hooks"]["Stop"][0]["hooks"][0].update(type="script"),
        ),
        "a hook must be of type command",
    ),
    (
        "timeout",
        _json_edit(
            "hooks/hooks.json",
            lambda o: o["hooks"]["Stop"][0]["hooks"][0].update(timeout=-1),
        ),
        "timeout must be a positive number",
    ),
    (
        "mcp",
        _json_edit(".mcp.json", lambda o: o["mcpServers"]["kgai"].update(args=[1])),
        ".mcp.json: kgai: command, string args and string env",
    ),
    (
        "skill",
        lambda root: (root / "skills" / "kgai").rename(root / "skills" / "memory"),
        "skills/memory/SKILL.md: name must be the folder's",
    ),
    (
        "command",
        lambda root: (root / "commands" / "kgai-ask.md").rename(
            root / "commands" / "Ask Me.txt"
        ),
        "commands/Ask Me.txt: a command is a kebab-case .md file",
    ),
    (
        "nested",
        lambda root: (root / ".claude-plugin" / "hooks.json").write_text("{}"),
        ".claude-plugin/: components belong at the root",
    ),
]


@pytest.mark.parametrize(("name", "edit", "problem"), CASES, ids=[c[0] for c in CASES])
def test_every_rule_of_the_check_catches_its_broken_folder(
    tmp_path: Path, name: str, edit: Any, problem: str
) -> None:
    problems = _broken(tmp_path, name, edit)
    assert any(problem in p for p in problems), problems
