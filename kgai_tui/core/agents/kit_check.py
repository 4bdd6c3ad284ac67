"""A Claude Code plugin folder checked against the plugin and hook documentation.

Written from Claude Code's published plugin reference (manifest fields, the
standard layout) and hooks reference (events, matcher groups, command hooks), the
rules a folder must meet to load; ``agent kit`` runs it on what it writes and
``agent check DIR`` on any folder. Each problem is one line naming the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

__all__ = ["HOOK_EVENTS", "check_plugin"]

_KEBAB: Final = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_SEMVER: Final = re.compile(
    r"^\d+\.\d+\.\d+(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
_SKILL_NAME: Final = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
#: The hook events of the hooks reference.
HOOK_EVENTS: Final = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "Notification",
        "UserPromptSubmit",
        "Stop",
        "SubagentStop",
        "PreCompact",
        "SessionStart",
        "SessionEnd",
    }
)
_MATCHED: Final = frozenset({"PreToolUse", "PostToolUse"})
_MANIFEST_TEXT: Final = ("description", "homepage", "repository", "license")
_COMPONENTS: Final = ("commands", "agents", "skills", "hooks", "mcpServers")
_COMMAND_KEYS: Final = frozenset(
    {
        "description",
        "argument-hint",
        "allowed-tools",
        "model",
        "disable-model-invocation",
    }
)


def _load(path: Path, out: list[str]) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        out.append(f"{path.name}: missing")
    except (OSError, ValueError) as exc:
        out.append(f"{path.name}: not JSON ({exc})")
    return None


def _manifest(root: Path, out: list[str]) -> None:
    where = ".claude-plugin/plugin.json"
    obj = _load(root / where, out)
    if obj is None:
        return
    if not isinstance(obj, dict):
        out.append(f"{where}: not an object")
        return
    name = obj.get("name")
    if not isinstance(name, str) or not _KEBAB.match(name):
        out.append(f"{where}: name must be kebab-case, starting with a letter")
    version = obj.get("version")
    if version is not None and (
        not isinstance(version, str) or not _SEMVER.match(version)
    ):
        out.append(f"{where}: version must be semantic (MAJOR.MINOR.PATCH)")
    for key in _MANIFEST_TEXT:
        if key in obj and not isinstance(obj[key], str):
            out.append(f"{where}: {key} must be a string")
    author = obj.get("author")
    if author is not None and (
        not isinstance(author, dict) or not isinstance(author.get("name"), str)
    ):
        out.append(f"{where}: author must be an object with a name")
    keywords = obj.get("keywords")
    if keywords is not None and (
        not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords)
    ):
        out.append(f"{where}: keywords must be a list of strings")
    for key in _COMPONENTS:
        value = obj.get(key)
        paths = [value] if isinstance(value, str) else value
        if value is not None and not (
            isinstance(paths, list)
            and all(isinstance(p, str) and p.startswith("./") for p in paths)
        ):
            out.append(f"{where}: {key} must be a ./ path or a list of them")
    extra = sorted(
        p.name
        for p in (root / ".claude-plugin").iterdir()
        if p.name not in ("plugin.json", "marketplace.json")
    )
    if extra:
        out.append(f".claude-plugin/: components belong at the root, not {extra}")


def _hooks(root: Path, out: list[str]) -> None:
    where = "hooks/hooks.json"
    if not (root / where).exists():
        return
    obj = _load(root / where, out)
    if not isinstance(obj, dict) or not isinstance(obj.get("hooks"), dict):
        out.append(f"{where}: must be an object with a hooks object")
        return
    for event, groups in obj["hooks"].items():
        if event not in HOOK_EVENTS:
            out.append(f"{where}: unknown hook event {event!r}")
            continue
        if not isinstance(groups, list):
            out.append(f"{where}: {event} must be a list of matcher groups")
            continue
        for group in groups:
            _group(where, event, group, out)


def _group(where: str, event: str, group: Any, out: list[str]) -> None:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        out.append(f"{where}: {event}: a group needs a hooks list")
        return
    matcher = group.get("matcher")
    if matcher is not None:
        if event not in _MATCHED:
            out.append(f"{where}: {event} takes no matcher")
        elif not isinstance(matcher, str):
            out.append(f"{where}: {event}: matcher must be a string")
        else:
            try:
                re.compile(matcher)
            except re.error:
                out.append(f"{where}: {event}: matcher is not a pattern")
    if not group["hooks"]:
        out.append(f"{where}: {event}: a group with no hooks")
    for hook in group["hooks"]:
        if not isinstance(hook, dict) or hook.get("type") != "command":
            out.append(f"{where}: {event}: a hook must be of type command")
            continue
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            out.append(f"{where}: {event}: a hook needs a command")
        timeout = hook.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or timeout <= 0
        ):
            out.append(
                f"{where}: {event}: timeout must be a positive number of seconds"
            )


def _mcp(root: Path, out: list[str]) -> None:
    if not (root / ".mcp.json").exists():
        return
    obj = _load(root / ".mcp.json", out)
    servers = obj.get("mcpServers") if isinstance(obj, dict) else None
    if not isinstance(servers, dict) or not servers:
        out.append(".mcp.json: needs an mcpServers object")
        return
    for name, server in servers.items():
        ok = (
            isinstance(server, dict)
            and isinstance(server.get("command"), str)
            and all(isinstance(a, str) for a in server.get("args", []))
            and isinstance(server.get("env", {}), dict)
            and all(isinstance(v, str) for v in server.get("env", {}).values())
        )
        if not ok:
            out.append(f".mcp.json: {name}: command, string args and string env")


def front_matter(text: str) -> dict[str, str] | None:
    """``key: value`` lines between the opening and closing ``---`` (``None``:
    no front matter)."""
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        return None
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line == "---":
            return out
        key, sep, value = line.partition(":")
        if not sep:
            return None
        out[key.strip()] = value.strip()
    return None


def _skills(root: Path, out: list[str]) -> None:
    for skill in (
        sorted((root / "skills").glob("*/")) if (root / "skills").is_dir() else []
    ):
        where = f"skills/{skill.name}/SKILL.md"
        try:
            meta = front_matter((skill / "SKILL.md").read_text("utf-8"))
        except OSError:
            out.append(f"{where}: missing")
            continue
        if meta is None:
            out.append(f"{where}: no front matter")
            continue
        name, description = meta.get("name", ""), meta.get("description", "")
        if not _SKILL_NAME.match(name) or len(name) > 64 or name != skill.name:
            out.append(f"{where}: name must be the folder's, lowercase and hyphens")
        if not description or len(description) > 1024:
            out.append(f"{where}: description must be 1 to 1024 characters")


def _commands(root: Path, out: list[str]) -> None:
    folder = root / "commands"
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        where = f"commands/{path.name}"
        if path.suffix != ".md" or not _KEBAB.match(path.stem):
            out.append(f"{where}: a command is a kebab-case .md file")
            continue
        meta = front_matter(path.read_text("utf-8"))
        if meta is not None and not set(meta) <= _COMMAND_KEYS:
            out.append(
                f"{where}: unknown front matter {sorted(set(meta) - _COMMAND_KEYS)}"
            )


def _marketplace(root: Path, out: list[str]) -> None:
    where = ".claude-plugin/marketplace.json"
    if not (root / where).exists():
        return
    obj = _load(root / where, out)
    plugins = obj.get("plugins") if isinstance(obj, dict) else None
    if (
        not isinstance(obj, dict)
        or not _KEBAB.match(str(obj.get("name", "")))
        or not isinstance(obj.get("owner"), dict)
        or not isinstance(plugins, list)
    ):
        out.append(f"{where}: needs a kebab-case name, an owner and a plugins list")
        return
    for plugin in plugins:
        if not isinstance(plugin, dict) or not _KEBAB.match(
            str(plugin.get("name", ""))
        ):
            out.append(f"{where}: each plugin needs a kebab-case name")
        elif not isinstance(plugin.get("source"), str):
            out.append(f"{where}: {plugin['name']}: source must be a path")


def check_plugin(root: Path) -> list[str]:
    """Every problem of the plugin folder at ``root`` (empty: it loads)."""
    out: list[str] = []
    if not (root / ".claude-plugin").is_dir():
        return [".claude-plugin/plugin.json: missing"]
    _manifest(root, out)
    _marketplace(root, out)
    _hooks(root, out)
    _mcp(root, out)
    _skills(root, out)
    _commands(root, out)
    return out
