"""``kgai-tui agent kit AGENT [DIR]`` and ``agent check DIR``: wiring for coding agents.

``kit claude DIR`` writes a Claude Code plugin folder into DIR and nowhere else (a
folder that holds anything but an earlier kit is refused, nothing is followed
through a symlink); the other agents get their MCP configuration and an AGENTS.md
section on stdout, and nothing is written at all.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

import click

from kgai_tui.cli.support import handles_errors
from kgai_tui.core.errors import UsageError

__all__ = ["agent_group"]


def _command(given: str | None) -> list[str]:
    """How the agent runs kgai-tui: ``--command``, else ``kgai-tui`` on PATH, else
    this interpreter with ``-m kgai_tui``."""
    if given:
        return shlex.split(given)
    return (
        ["kgai-tui"] if shutil.which("kgai-tui") else [sys.executable, "-m", "kgai_tui"]
    )


def _project(given: str | None) -> Path:
    from kgai_tui.core.store.discovery import project_root

    return Path(given).resolve() if given else project_root().resolve()


def _writable(target: Path, names: list[str]) -> None:
    """Refuse a folder that is not ours to fill, and any symlink on the way."""
    from kgai_tui.core.agents.kit import PLUGIN_NAME

    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise UsageError(f"{target} is not a directory")
    if target.exists() and any(target.iterdir()):
        manifest = target / ".claude-plugin" / "plugin.json"
        if (
            not manifest.is_file()
            or f'"name": "{PLUGIN_NAME}"' not in manifest.read_text("utf-8", "replace")
        ):
            raise UsageError(
                f"{target} is not empty and holds no kgai-tui kit: name a new directory"
            )
    for name in names:
        here = target
        for part in Path(name).parts:
            here = here / part
            if here.is_symlink():
                raise UsageError(f"{here} is a symlink: nothing is written through one")


def _write(target: Path, files: dict[str, str]) -> None:
    for name, text in sorted(files.items()):
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)


@click.group("agent")
def agent_group() -> None:
    """Wire a coding agent to the decision memory.

    kit claude DIR writes a Claude Code plugin; kit codex|cursor|zed|agents-md
    prints what to paste; check DIR checks a plugin folder.

    Example: kgai-tui agent kit claude ~/plugins/kgai-tui
    """


@agent_group.command("kit")
@click.argument(
    "agent", type=click.Choice(["claude", "codex", "cursor", "zed", "agents-md"])
)
@click.argument("directory", required=False, default=None)
@click.option(
    "--project",
    default=None,
    metavar="DIR",
    help="The project the agent may record into (default: this git project).",
)
@click.option(
    "--command",
    "command",
    default=None,
    metavar="CMD",
    help="How the agent runs kgai-tui (default: kgai-tui on PATH, else this Python).",
)
@handles_errors
def kit_command(
    agent: str, directory: str | None, project: str | None, command: str | None
) -> None:
    """Write a Claude Code plugin into DIRECTORY, or print another agent's wiring.

    claude: the MCP server (record on, for this project only), the hooks, a skill
    with the capture rules and slash commands, checked against the plugin and hook
    documentation. codex, cursor, zed: the MCP configuration and an AGENTS.md
    section, printed; agents-md: the section alone. Nothing else is written.

    Example: kgai-tui agent kit claude ~/plugins/kgai-tui
    """
    from kgai_tui.core.agents.kit import claude_plugin, snippet
    from kgai_tui.core.agents.kit_check import check_plugin

    cmd, where = _command(command), _project(project)
    if agent != "claude":
        if directory is not None:
            raise UsageError(f"{agent} has no plugin folder: the kit is printed")
        click.echo(snippet(agent, cmd, where), nl=False)
        return
    if directory is None:
        raise UsageError("name the directory to write the plugin into")
    target = Path(directory).expanduser().absolute()
    files = claude_plugin(cmd, where)
    _writable(target, list(files))
    _write(target, files)
    problems = check_plugin(target)
    if problems:
        raise UsageError("the plugin folder does not check: " + "; ".join(problems))
    click.echo(f"wrote a Claude Code plugin into {target}:")
    for name in sorted(files):
        click.echo(f"  {name}")
    click.echo(
        f"record is on for {where} only. In Claude Code: /plugin marketplace add "
        f"{shlex.quote(str(target))}, then /plugin install kgai-tui@kgai-tui-local "
        f"(or start `claude --plugin-dir {shlex.quote(str(target))}`)."
    )


@agent_group.command("check")
@click.argument("directory")
@handles_errors
def check_command(directory: str) -> None:
    """Check a Claude Code plugin folder against the plugin and hook documentation.

    Exit 0 when it loads; else one line per problem and exit 1.

    Example: kgai-tui agent check ~/plugins/kgai-tui
    """
    from kgai_tui.core.agents.kit_check import check_plugin

    problems = check_plugin(Path(directory))
    for problem in problems:
        click.echo(problem)
    if problems:
        sys.exit(1)
    click.echo(f"{directory}: the plugin checks")
