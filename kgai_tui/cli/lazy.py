"""The commands kept outside :mod:`kgai_tui.cli.main`, imported only when run.

Each module pulls in its own answers and libraries (MCP, git, S3, search, reports,
Cypher), which ``--help`` and the kg reads defined in ``main`` should not pay for;
``main`` lists them from this table (a test holds each short help to the command's
own first sentence).
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = ["LAZY_COMMANDS", "LazyCommand"]


class LazyCommand(NamedTuple):
    """A command kept in another module, and what ``--help`` lists for it."""

    module: str
    attribute: str
    #: Its first docstring sentence, as click would list it (a test holds them equal).
    short_help: str
    hidden: bool = False
    #: Registered under another name than its own (kg's ``ingest`` for ``record``).
    alias: bool = False


#: The commands of the other CLI modules. They are imported when run (or completed),
#: never for ``--help`` or a read defined here: each module pulls in its own answers
#: and libraries (MCP, git, S3, search, reports), which a read should not pay for.
LAZY_COMMANDS: Final[dict[str, LazyCommand]] = {
    "init": LazyCommand(
        "kgai_tui.cli.write",
        "init_command",
        "Create a store, or bring one up to date.",
    ),
    "record": LazyCommand(
        "kgai_tui.cli.write",
        "record_command",
        "Record decisions from a kg ingest JSON document.",
    ),
    "ingest": LazyCommand(
        "kgai_tui.cli.write",
        "record_command",
        "Record decisions from a kg ingest JSON document.",
        hidden=True,
        alias=True,
    ),
    "resolve-conflict": LazyCommand(
        "kgai_tui.cli.write",
        "resolve_conflict_command",
        "End a conflict with one decision superseding every side.",
    ),
    "mcp": LazyCommand(
        "kgai_tui.cli.agents",
        "mcp_command",
        "Serve the store to AI agents over MCP (stdio).",
    ),
    "sync": LazyCommand(
        "kgai_tui.cli.agents",
        "sync_command",
        "Share the store with teammates through git or an S3 bucket.",
    ),
    "remote": LazyCommand(
        "kgai_tui.cli.agents",
        "remote_command",
        "Show or set the remote that kgai-tui sync uses.",
    ),
    "agent": LazyCommand(
        "kgai_tui.cli.kit",
        "agent_group",
        "Wire a coding agent to the decision memory.",
    ),
    "hook": LazyCommand(
        "kgai_tui.cli.hooks",
        "hook_group",
        "Answer a coding agent's hooks (hook JSON on stdin).",
    ),
    "people": LazyCommand(
        "kgai_tui.cli.team",
        "people_command",
        "Show who decided what, and how much of it still stands.",
    ),
    "stale": LazyCommand(
        "kgai_tui.cli.team",
        "stale_command",
        "List elements nobody has decided on for a long time.",
    ),
    "search": LazyCommand(
        "kgai_tui.cli.search",
        "search_command",
        "Search elements and decisions (BM25).",
    ),
    "query": LazyCommand(
        "kgai_tui.cli.query",
        "query_command",
        "Ask the graph anything in read-only Cypher.",
    ),
    "bench": LazyCommand(
        "kgai_tui.cli.bench",
        "bench_group",
        "Generate benchmark stores and measure them.",
        hidden=True,
    ),
    "import": LazyCommand(
        "kgai_tui.cli.onboard",
        "import_group",
        "Import decisions kept elsewhere, such as ADRs.",
    ),
    "config": LazyCommand(
        "kgai_tui.cli.settings",
        "config_command",
        "Show or change kg's layered settings.",
    ),
    "prompt": LazyCommand(
        "kgai_tui.cli.settings",
        "prompt_command",
        "Show the team's capture rules (config get prompt).",
    ),
    "trust": LazyCommand(
        "kgai_tui.cli.settings",
        "trust_command",
        "Approve this repository's committed .kgairc.",
    ),
    "rotate": LazyCommand(
        "kgai_tui.cli.settings",
        "rotate_command",
        "Give this store a fresh install identity.",
    ),
    "rebuild": LazyCommand(
        "kgai_tui.cli.settings",
        "rebuild_command",
        "Rebuild this store's derived caches from the log.",
    ),
    "diff": LazyCommand(
        "kgai_tui.cli.onboard",
        "diff_command",
        "Show what changed between two moments, and why.",
    ),
    "report": LazyCommand(
        "kgai_tui.cli.onboard",
        "report_command",
        "Write the store at a moment as one readable document.",
    ),
}
