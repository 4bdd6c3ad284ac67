"""One answer per read: the CLI's ``--json``, the MCP tools and the agent view print
the bytes of the same answer function (:mod:`kgai_tui.core.answers`).

Every answer function is wrapped in a spy wherever a face can reach it; each face
is then run in this process for every case, and the test checks that the face
called the read's answer function exactly once and printed exactly
``encode(answer)`` (or ``encode(failure(...))`` when it raised), that those bytes
equal a direct call of the unwrapped function, and that the CLI, the MCP tool and
the agent view agree byte for byte wherever they offer the read. The cases must
cover every answer function, every CLI read command and every MCP read tool, so a
new read cannot skip this proof. (``tests/test_mcp.py`` checks the same agreement
between the real console script and the real server process.)
"""

from __future__ import annotations

import inspect
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import wraps
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp.types import CallToolResult, TextContent

import kgai_tui.cli.main as cli_main
import kgai_tui.mcp.server as mcp_server
import kgai_tui.ui.views.agent as agent_view
from kgai_tui.core.answers import kg, moments, people, query, recall, search
from kgai_tui.core.answers.answer import Answer, encode, failure, failure_message
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import KgaiError
from kgai_tui.demo import DEMO_STORE
from kgai_tui.mcp.store import LiveStore

ANSWER_MODULES = (kg, recall, moments, search, people, query)
PAYMENTS = "el_7afad531e3f0096a1da2"  # contested in the demo store
KINDS = "MATCH (e:Element) RETURN e.kind AS kind, count(*) AS n"
LINKS = "MATCH (a:Element)-[r:LINK]->(b:Element) RETURN a.name, r.kind, b.name"
#: Commands that write, serve or open the explorer: not reads.
NOT_READS = {
    "open",
    "init",
    "record",
    "resolve-conflict",
    "import",
    "sync",
    "remote",  # shows or sets where sync goes: the config, not a read of the log
    "mcp",
    "agent",  # writes or prints a plugin kit: configuration, not a read
    "hook",  # an agent's hooks: they answer its JSON (tests/test_hooks.py)
    "bench",
    "report",  # Markdown or HTML, never JSON (tests/test_report.py)
    # kg's settings and identity commands: they read or write configuration, not
    # the log (tests/test_settings_trust.py).
    "config",
    "prompt",
    "trust",
    "rotate",
    "rebuild",
    # kg's names: ingest is record, version is --version, and info is status (the
    # same bytes, tests/test_cli_forgiving.py).
    "ingest",
    "info",
    "version",
}


def answer_functions() -> dict[str, Callable[..., Answer]]:
    """Every read's answer function, by name (``status_answer``, ...)."""
    found: dict[str, Callable[..., Answer]] = {}
    for module in ANSWER_MODULES:
        for name in module.__all__:
            value = getattr(module, name)
            if name.endswith("_answer") and inspect.isfunction(value):
                found[name] = value
    return found


@dataclass(frozen=True)
class Case:
    """One read with its arguments, as each face that offers it is asked."""

    read: str
    args: tuple[Any, ...]
    cli: list[str]
    mcp: tuple[str, dict[str, Any]] | None = None
    agent: tuple[str, str] | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


CASES: list[Case] = [
    Case("status_answer", (), ["status"], ("status", {})),
    Case("conflicts_answer", ("",), ["conflicts"], ("conflicts", {})),
    Case(
        "conflicts_answer",
        ("pay",),
        ["conflicts", "--about", "pay"],
        ("conflicts", {"about": "pay"}),
    ),
    Case("heads_answer", (None,), ["heads"]),
    Case("heads_answer", ("feature:Invoice",), ["heads", "feature:Invoice"]),
    Case("heads_answer", ("feature:Nope",), ["heads", "feature:Nope"]),
    Case(
        "history_answer",
        ("feature:Invoice",),
        ["history", "feature:Invoice"],
        ("history", {"element": "feature:Invoice"}),
    ),
    Case(
        "history_answer",
        (PAYMENTS,),
        ["history", PAYMENTS],
        ("history", {"element": PAYMENTS}),
    ),
    Case(
        "history_answer",
        ("feature:Nope",),
        ["history", "feature:Nope"],
        ("history", {"element": "feature:Nope"}),
    ),
    Case("resolve_answer", ("feature:Invoice",), ["resolve", "feature:Invoice"]),
    Case("resolve_answer", ("service:Nowhere",), ["resolve", "service:Nowhere"]),
    Case("recall_answer", ("", "", 15), ["context"], ("recall", {}), ("", "")),
    Case(
        "recall_answer",
        ("services/payments/*", "refunds", 15),
        ["context", "--paths", "services/payments/*", "--about", "refunds"],
        ("recall", {"paths": "services/payments/*", "topic": "refunds"}),
        ("services/payments/*", "refunds"),
    ),
    Case(
        "recall_answer",
        ("services/billing/invoice/render.go, web/checkout/x.ts ", "", 3),
        [
            "recall",
            "--paths",
            "services/billing/invoice/render.go, web/checkout/x.ts ",
            "--max",
            "3",
        ],
        (
            "recall",
            {
                "paths": ["services/billing/invoice/render.go", " web/checkout/x.ts "],
                "max": 3,
            },
        ),
    ),
    Case("people_answer", ("",), ["people"], ("people", {})),
    Case(
        "people_answer",
        ("2026-02-01",),
        ["people", "--as-of", "2026-02-01"],
        ("people", {"as_of": "2026-02-01"}),
    ),
    Case(
        "people_answer",
        ("2026-02-30",),
        ["people", "--as-of", "2026-02-30"],
        ("people", {"as_of": "2026-02-30"}),
    ),
    Case("stale_answer", ("180d",), ["stale"]),
    Case("stale_answer", ("4w",), ["stale", "--older-than", "4w"]),
    Case("stale_answer", ("soon",), ["stale", "--older-than", "soon"]),
    Case(
        "as_of_answer",
        ("2026-02-01",),
        ["as-of", "2026-02-01"],
        ("as_of", {"timestamp": "2026-02-01"}),
    ),
    Case(
        "as_of_answer",
        ("yesterday",),
        ["as-of", "yesterday"],
        ("as_of", {"timestamp": "yesterday"}),
    ),
    Case(
        "search_answer",
        ("invoice", 20),
        ["search", "invoice"],
        ("search", {"query": "invoice"}),
    ),
    Case(
        "search_answer",
        ("stripe", 3),
        ["search", "--all", "--limit", "3", "stripe"],
        ("search", {"query": "stripe", "include_all": True, "limit": 3}),
        kwargs={"include_all": True},
    ),
    Case(
        "search_answer",
        ("search", 20),
        ["search", "--as-of", "2026-02-01", "search"],
        ("search", {"query": "search", "as_of": "2026-02-01"}),
        kwargs={"as_of": "2026-02-01"},
    ),
    Case(
        "search_answer",
        ("invoice", 20),
        ["search", "--as-of", "soon", "invoice"],
        ("search", {"query": "invoice", "as_of": "soon"}),
        kwargs={"as_of": "soon"},
    ),
    Case(
        "diff_answer",
        ("2026-01-31", "2026-03-31"),
        ["diff", "2026-01-31", "2026-03-31"],
    ),
    Case("diff_answer", ("later", "2026-03-31"), ["diff", "later", "2026-03-31"]),
    Case("export_answer", (), ["export"]),
    Case("export_answer", (), ["export", "--canonical"], kwargs={"canonical": True}),
    Case("doctor_answer", (), ["doctor"]),
    Case(
        "query_answer",
        (KINDS,),
        ["query", "--limit", "100", KINDS],
        ("query", {"cypher": KINDS}),
        kwargs={"limit": 100},
    ),
    Case(
        "query_answer",
        (LINKS,),
        ["query", "--as-of", "2026-02-01", "--limit", "3", LINKS],
        ("query", {"cypher": LINKS, "as_of": "2026-02-01", "limit": 3}),
        kwargs={"as_of": "2026-02-01", "limit": 3},
    ),
    Case(
        "query_answer",
        ("MATCH (e:Element RETURN e",),
        ["query", "--limit", "100", "MATCH (e:Element RETURN e"],
        ("query", {"cypher": "MATCH (e:Element RETURN e"}),
        kwargs={"limit": 100},
    ),
    Case(
        "query_answer",
        ("MATCH (e:Element) SET e.name = 'x'",),
        ["query", "--limit", "100", "MATCH (e:Element) SET e.name = 'x'"],
        ("query", {"cypher": "MATCH (e:Element) SET e.name = 'x'"}),
        kwargs={"limit": 100},
    ),
]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the demo store, read with a fixed clock."""
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-06-01T12:00:00Z")
    return target


Outcome = Answer | BaseException


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Outcome]]]:
    """Wrap every answer function wherever a face can reach it; yield the call log."""
    log: list[tuple[str, Outcome]] = []
    modules: list[ModuleType] = [
        m for name, m in sys.modules.items() if name.startswith("kgai_tui")
    ]
    for name, fn in answer_functions().items():

        def spy(
            *args: Any, _fn: Callable[..., Answer] = fn, _name: str = name, **kw: Any
        ) -> Answer:
            try:
                result = _fn(*args, **kw)
            except BaseException as exc:
                log.append((_name, exc))
                raise
            log.append((_name, result))
            return result

        wrapped = wraps(fn)(spy)
        for module in modules:
            for attr, value in list(vars(module).items()):
                if value is fn:
                    monkeypatch.setattr(module, attr, wrapped)
    yield log


def bytes_of(outcome: Outcome) -> bytes:
    """What a face prints for what the answer function gave."""
    if isinstance(outcome, Answer):
        return encode(outcome)
    assert isinstance(outcome, KgaiError | OSError), outcome
    return encode(failure(failure_message(outcome)))


def direct(case: Case, store: Path) -> bytes:
    """The unwrapped answer function, called with the test's own store."""
    fn = answer_functions()[case.read]
    if case.read == "search_answer":
        from kgai_tui.core.search.index import SearchIndex

        engine = open_engine(store)
        source: Any = lambda _need_engine: SearchIndex.for_engine(engine)  # noqa: E731
    else:
        source = lambda: open_engine(store)  # noqa: E731
    args = case.args
    if case.read == "doctor_answer":  # and its replay, without the caches
        args = (lambda: open_engine(store), *args)
    try:
        return encode(fn(source, *args, **case.kwargs))
    except KgaiError as exc:
        return encode(failure(failure_message(exc)))


def one_call(log: list[tuple[str, Outcome]], read: str, face: str) -> Outcome:
    """The single answer-function call a face made; the log is emptied."""
    assert [name for name, _ in log] == [read], (face, read, log)
    outcome = log[0][1]
    log.clear()
    return outcome


def text_of(result: CallToolResult) -> bytes:
    """The single text block of a tool result, as bytes."""
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text.encode("utf-8")


def test_every_read_is_one_answer_function_on_every_face(
    store: Path, spied: list[tuple[str, Outcome]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLI --json, MCP and the agent view: one call each, identical bytes."""
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-12-01T00:00:00Z")  # stale's "now"
    server = mcp_server.build_server(str(store))
    engine = open_engine(store)
    for case in CASES:
        expected = direct(case, store)
        spied.clear()

        done = CliRunner().invoke(
            cli_main.main, [*case.cli, "--store", str(store), "--json"]
        )
        outcome = one_call(spied, case.read, "cli")
        assert done.stdout_bytes == bytes_of(outcome) == expected, case.cli
        assert (done.exit_code == 0) == (isinstance(outcome, Answer) and outcome.ok), (
            case.cli,
            done.exit_code,
            done.stderr,
        )

        if case.mcp is not None:
            tool, arguments = case.mcp
            result = anyio.run(server.call_tool, tool, arguments)
            assert isinstance(result, CallToolResult)
            outcome = one_call(spied, case.read, "mcp")
            assert text_of(result) == bytes_of(outcome) == expected, case.mcp
            assert result.is_error == (not isinstance(outcome, Answer)), case.mcp

        if case.agent is not None:
            shown = agent_view.agent_payload(engine, *case.agent)
            outcome = one_call(spied, case.read, "agent view")
            assert shown.encode("utf-8") == bytes_of(outcome) == expected, case.agent


def test_the_cases_cover_every_read_of_every_face(store: Path) -> None:
    """Each answer function, CLI read command and MCP read tool has a case."""
    assert {case.read for case in CASES} == set(answer_functions())
    cli_reads = set(cli_main.all_commands()) - NOT_READS
    assert {case.cli[0] for case in CASES} == cli_reads
    tools = {fn.__name__ for fn, _ in mcp_server.read_tools(LiveStore(str(store)))}
    assert {case.mcp[0] for case in CASES if case.mcp is not None} == tools
    assert any(case.agent is not None for case in CASES)
