"""Layering and static checks: core stays headless, typed and lint-clean."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kgai_tui"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = BIN / name
    if found.exists():
        return str(found)
    path = shutil.which(name)
    assert path, f"{name} is not installed (pip install -e '.[test]')"
    return path


def test_core_and_cli_import_no_ui_library() -> None:
    """Importing the core and the CLI loads neither Textual nor Rich."""
    code = (
        "import sys, kgai_tui.cli.main, kgai_tui.core.engine.engine, kgai_tui.core.reads.context;"
        "print([m for m in ('textual', 'rich', 'rich.console') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_only_named_modules_import_engine_libraries() -> None:
    """Only projection-side core modules import networkx; nothing outside core does."""
    allowed = {
        "networkx": {
            "kgai_tui/core/replay/projection.py",
            "kgai_tui/core/replay/projection_view.py",
            "kgai_tui/core/replay/acyclic_graph.py",
            "kgai_tui/core/model/disk.py",
            "kgai_tui/core/timeindex/view.py",
        }
    }
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in allowed:
                    assert rel in allowed[top], f"{rel} imports {top}"


def test_every_cli_command_has_help_with_an_example() -> None:
    """Each command documents itself, with an example line."""
    from kgai_tui.cli.main import all_commands

    for name, command in all_commands().items():
        assert command.help, name
        assert "Example:" in command.help, name


def test_ruff_is_clean() -> None:
    """ruff finds nothing in the package, the tests and the benchmarks."""
    out = subprocess.run(
        [_tool("ruff"), "check", "kgai_tui", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_on_the_package() -> None:
    """mypy --strict passes on the whole package (core, CLI, UI, MCP)."""
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "kgai_tui"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_import_contracts_hold() -> None:
    """import-linter: the core imports no UI library, the CLI or click."""
    if not (BIN / "lint-imports").exists() and not shutil.which("lint-imports"):
        pytest.fail("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run(
        [_tool("lint-imports")], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_import_cycle_in_the_package() -> None:
    """No module of kgai_tui reaches itself through imports, deferred ones included.

    Imports under ``if TYPE_CHECKING:`` are annotations, not dependencies (as in the
    import-linter contracts); imports inside functions count.
    """
    import grimp

    graph = grimp.build_graph(
        "kgai_tui", cache_dir=None, exclude_type_checking_imports=True
    )
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.append((module, *back))
    assert cycles == []


def test_no_private_name_is_imported_across_modules() -> None:
    """``from kgai_tui.x import _name`` never appears: modules meet on public names."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "kgai_tui"
            ):
                found += [
                    f"{path.relative_to(ROOT)}: {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert found == []


#: Where ``getattr``/``hasattr`` stay: lazy imports by name, version strings of
#: libraries, settings read by key, platform features, the export's part names,
#: the time index's columns by name, and an as-of column's optional ``take``.
_PROBES_ALLOWED = {
    "kgai_tui/cli/main.py": 1,
    "kgai_tui/cli/support.py": 1,
    "kgai_tui/core/__init__.py": 1,
    "kgai_tui/core/detached.py": 1,
    "kgai_tui/core/query/run.py": 1,
    "kgai_tui/core/search/backend.py": 1,
    "kgai_tui/core/store/config_file.py": 1,
    "kgai_tui/core/store/regular_file.py": 1,
    "kgai_tui/core/store/settings.py": 1,
    "kgai_tui/core/timeindex/fold.py": 1,
    "kgai_tui/sync/s3_client.py": 1,
}


def test_no_read_probes_a_store_handle_for_what_it_can_do() -> None:
    """A read asks the one typed handle (:mod:`kgai_tui.core.reads.store`), never
    ``getattr``/``hasattr`` on an engine or a projection: a probe hides from the
    type checker which kind of store a read was given (the explorer's diff was
    handed the read model that way, and hung)."""
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
            ):
                name = path.relative_to(ROOT).as_posix()
                found[name] = found.get(name, 0) + 1
    assert found == _PROBES_ALLOWED


def test_every_worker_is_named_so_textual_never_reprs_its_arguments() -> None:
    """Without ``description=``, Textual names a worker by the ``repr`` of every
    argument, on the UI thread: a snapshot's repr prints its graph delta, and a
    slider jump across the 1M store spent ~0.08 s there (py-spy) before any
    work began. Textual's ``work`` is called in one place, which names it
    (``ui/threads.py``); the explorer's workers go through it."""
    calls, workers = [], 0
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id == "thread_worker":
                workers += 1
            elif node.func.id == "work" and path.parent.name != "core":
                named = "description" in {k.arg for k in node.keywords}
                calls.append((path.relative_to(ROOT).as_posix(), named))
    assert calls == [("kgai_tui/ui/threads.py", True)]
    assert workers >= 13  # the explorer's workers are found at all


def test_the_wheel_holds_no_benchmark_code() -> None:
    """Benchmarks live outside the package; setuptools only packs kgai_tui*."""
    names = {p.stem for p in PACKAGE.rglob("*.py")}
    assert not names & {"engine_bench", "search_bench", "bench_run", "genlog"}
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    assert 'include = ["kgai_tui*"]' in text


def test_keybindings_doc_is_the_command_registry() -> None:
    """docs/keybindings.md lists exactly the registry's keys and the legend."""
    from kgai_tui.ui.commands import keybindings_markdown

    doc = (ROOT / "docs" / "keybindings.md").read_text(encoding="utf-8")
    begin, end = "<!-- keys: begin -->\n", "<!-- keys: end -->"
    assert begin in doc and end in doc
    generated = doc[doc.index(begin) + len(begin) : doc.index(end)]
    assert generated == keybindings_markdown()
