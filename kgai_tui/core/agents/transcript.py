"""What an agent's turn did, read from its transcript (Claude Code's JSONL).

A turn starts at the person's last prompt: a ``user`` line whose content is a plain
string (tool results, reminders and skill text are lists, as the reference's stop
hook also assumes). Every line is hostile: unreadable ones are skipped, the file is
read up to a bound (its tail, when longer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from kgai_tui.core.store.regular_file import open_regular

__all__ = ["EDIT_TOOLS", "Turn", "read_turn"]

#: The tools that change files.
EDIT_TOOLS: Final = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
#: A shell command that records (ours or kg's).
_RECORDS: Final = re.compile(
    r"\b(?:kgai-tui|kgai_tui)\s+(?:[\w-]+\s+)*?(?:record|ingest|resolve-conflict)\b"
    r"|\bkg\s+(?:ingest|resolve)\b"
)
#: An MCP tool that records (``mcp__<server>__record``).
_MCP_RECORD: Final = re.compile(r"^mcp__.+__(?:record|resolve_conflict)$")
#: The most of a transcript that is read (its tail when longer).
MAX_BYTES: Final = 16 << 20


@dataclass(frozen=True, slots=True)
class Turn:
    """The last turn: how many edits, whether it recorded, which files it edited."""

    edits: int = 0
    recorded: bool = False
    files: tuple[str, ...] = ()


def _tool_uses(obj: Any) -> list[dict[str, Any]]:
    message = obj.get("message") if isinstance(obj, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]


def _is_prompt(obj: Any) -> bool:
    if not isinstance(obj, dict) or obj.get("type") != "user":
        return False
    message = obj.get("message")
    return isinstance(message, dict) and isinstance(message.get("content"), str)


def _read(path: Path) -> bytes:
    """The transcript's last :data:`MAX_BYTES`: a regular file only (a FIFO named
    by a hostile hook JSON would block the hook until the agent's timeout)."""
    with open_regular(path) as f:
        start = max(0, f.size - MAX_BYTES)
        data = f.read(start)
    if start:  # started mid-line: drop the partial first line
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    return data


def read_turn(path: Path) -> Turn:
    """The last turn of the transcript at ``path`` (an empty turn if unreadable)."""
    try:
        data = _read(path)
    except OSError:
        return Turn()
    parsed: list[Any] = []
    last_prompt = -1
    for line in data.splitlines():
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if _is_prompt(obj):
            last_prompt = len(parsed)
        parsed.append(obj)
    edits = 0
    recorded = False
    files: dict[str, None] = {}
    for obj in parsed[last_prompt + 1 :]:
        for use in _tool_uses(obj):
            name = use.get("name")
            args = use.get("input")
            args = args if isinstance(args, dict) else {}
            if name in EDIT_TOOLS:
                edits += 1
                target = args.get("file_path") or args.get("notebook_path")
                if isinstance(target, str) and target:
                    files[target] = None
            elif name == "Bash":
                command = args.get("command")
                if isinstance(command, str) and _RECORDS.search(command):
                    recorded = True
            elif isinstance(name, str) and _MCP_RECORD.match(name):
                recorded = True
    return Turn(edits, recorded, tuple(files))
