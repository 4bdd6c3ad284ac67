"""``kgai-tui hook session-start|stop|pre-edit``: answers for a coding agent's hooks.

Each reads the agent's hook JSON on stdin (Claude Code's shape: ``cwd``,
``transcript_path``, ``stop_hook_active``, ``tool_name``, ``tool_input``), answers in
well under a second on a warm store, and says nothing when there is nothing useful to
say. A hook never blocks the agent on our account: any failure is one line on stderr
and exit 0 (docs/agents.md, "Hooks").
"""

from __future__ import annotations

import functools
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, ParamSpec

import click
import orjson

from kgai_tui.cli.support import STORE_OPTION, model_source, resolve_location

__all__ = ["hook_group"]

P = ParamSpec("P")
#: The most of a hook's stdin that is read (Claude Code sends a few hundred bytes).
_MAX_INPUT: Final = 1 << 20


def _event() -> dict[str, Any]:
    """The hook JSON on stdin (``{}`` when there is none or it is not an object)."""
    try:
        data = sys.stdin.buffer.read(_MAX_INPUT)
        obj = orjson.loads(data) if data.strip() else {}
    except (OSError, orjson.JSONDecodeError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _enter(event: dict[str, Any]) -> None:
    """Work from the agent's directory, where its project (and store) is."""
    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd and os.path.isdir(cwd):
        os.chdir(cwd)


def _quiet_failures(fn: Callable[P, None]) -> Callable[P, None]:
    """Turn any failure into one line on stderr and exit 0: a hook that fails
    must never stop the agent's turn."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            fn(*args, **kwargs)
        except Exception as exc:
            first = (str(exc).splitlines() or [type(exc).__name__])[0]
            click.echo(f"kgai-tui hook: {first}", err=True)
        sys.exit(0)

    return wrapper


def _say(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def _reply(obj: dict[str, Any]) -> None:
    sys.stdout.buffer.write(orjson.dumps(obj) + b"\n")
    sys.stdout.flush()


@click.group("hook")
def hook_group() -> None:
    """Answer a coding agent's hooks (hook JSON on stdin).

    session-start prints the store's state and the team's capture rules; stop asks
    once to record a decision when the turn edited files and recorded none;
    pre-edit gives the decisions in force for the file about to be edited.

    Example: kgai-tui hook stop < hook.json
    """


@hook_group.command("session-start")
@STORE_OPTION
@_quiet_failures
def session_start_command(store: str | None) -> None:
    """Print the store's state and the team's capture rules (silent without them).

    Example: kgai-tui hook session-start < hook.json
    """
    from kgai_tui.core.agents.hooks import pending_text, rules_block, status_line
    from kgai_tui.core.answers.config import config_get_obj
    from kgai_tui.core.answers.kg import status_answer
    from kgai_tui.sync.auto import last_auto_sync

    _enter(_event())
    said: list[str] = []
    location = resolve_location(store)
    if location.exists:
        status = status_answer(model_source(store)).obj
        said.append(status_line(status, last_auto_sync(location.root)))
    prompt = config_get_obj("prompt", None, store)
    if prompt.get("pending_approval"):
        said.append(pending_text(str(prompt["pending_approval"])))
    elif prompt.get("value"):
        said.append(
            rules_block(
                str(prompt["value"]), str(prompt["source"]), secrets.token_hex(8)
            )
        )
    if said:
        _say("\n\n".join(said))


@hook_group.command("stop")
@STORE_OPTION
@_quiet_failures
def stop_command(store: str | None) -> None:
    """Ask once to record a decision when the turn edited files and recorded none.

    Example: kgai-tui hook stop < hook.json
    """
    from kgai_tui.core.agents.hooks import stop_reply
    from kgai_tui.core.agents.transcript import Turn, read_turn

    event = _event()
    _enter(event)
    if event.get("stop_hook_active") is True:
        return  # asked once already this turn: never twice in a row
    if not resolve_location(store).exists:
        return  # nowhere to record into
    path = event.get("transcript_path")
    turn = read_turn(Path(path)) if isinstance(path, str) and path else Turn()
    reply = stop_reply(event, turn)
    if reply is not None:
        _reply(reply)


@hook_group.command("pre-edit")
@STORE_OPTION
@_quiet_failures
def pre_edit_command(store: str | None) -> None:
    """Give the decisions in force for the file an edit is about to change.

    Example: kgai-tui hook pre-edit < hook.json
    """
    from kgai_tui.core.agents.hooks import pre_edit_reply
    from kgai_tui.core.agents.transcript import EDIT_TOOLS
    from kgai_tui.core.answers.recall import recall_answer

    event = _event()
    _enter(event)
    if event.get("tool_name") not in EDIT_TOOLS:
        return
    args = event.get("tool_input")
    args = args if isinstance(args, dict) else {}
    target = args.get("file_path") or args.get("notebook_path")
    if not isinstance(target, str) or not target or not resolve_location(store).exists:
        return
    rel = _relative(target)
    answer = recall_answer(model_source(store), (rel,), "")
    name = event.get("hook_event_name")
    reply = pre_edit_reply(
        answer.obj, [rel], name if isinstance(name, str) else "PreToolUse"
    )
    if reply is not None:
        _reply(reply)


def _relative(target: str) -> str:
    """``target`` relative to the agent's directory or the project root, as the
    elements' ``paths`` are written; as given when it is under neither."""
    from kgai_tui.core.store.discovery import project_root

    path = Path(target)
    if not path.is_absolute():
        return path.as_posix()
    for base in (Path.cwd(), project_root()):
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except (ValueError, OSError):
            continue
    return target
