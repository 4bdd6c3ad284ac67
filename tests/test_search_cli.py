"""``kgai-tui search`` and ``kgai-tui bench``."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest
from builders import as_person
from click.testing import CliRunner
from search_stores import relevance_store

from kgai_tui.cli.main import main
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gojson import marshal_indent, with_go_floats
from kgai_tui.core.search.index import SearchIndex
from kgai_tui.core.search.model import search_obj


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    relevance_store(root)
    return root


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, as_person(args))
    return result.exit_code, result.output


def test_json_output_is_kg_shaped_and_equals_the_library(store: Path) -> None:
    code, out = _run("search", "--store", str(store), "--json", "invoice", "rendering")
    assert code == 0
    obj = orjson.loads(out)
    assert list(obj) == ["hits", "ok"] and obj["ok"] is True
    first = obj["hits"][0]
    assert list(first)[:3] == ["kind", "id", "name"] and "snippet" in first
    expected = search_obj(
        SearchIndex.for_engine(open_engine(store)).search("invoice rendering")
    )
    assert out.encode() == marshal_indent(with_go_floats(expected))
    # The second run reuses the cache without reading the log, same bytes.
    assert _run("search", "--store", str(store), "--json", "invoice", "rendering") == (
        0,
        out,
    )


def test_options_all_limit_and_as_of(store: Path) -> None:
    _, default = _run("search", "--store", str(store), "--json", "cafe")
    assert orjson.loads(default)["hits"] == []
    _, everything = _run("search", "--store", str(store), "--json", "--all", "cafe")
    assert len(orjson.loads(everything)["hits"]) == 1
    _, limited = _run(
        "search", "--store", str(store), "--json", "--limit", "1", "invoice"
    )
    assert len(orjson.loads(limited)["hits"]) == 1
    _, early = _run(
        "search", "--store", str(store), "--json", "--as-of", "2026-01-05", "checkout"
    )
    assert orjson.loads(early)["hits"] == []
    code, out = _run("search", "--store", str(store), "--json", "--as-of", "soon", "x")
    assert code == 2 and '"ok": false' in out


def test_text_rendering(store: Path) -> None:
    code, out = _run("search", "--store", str(store), "invoice", "rendering")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("● ")
    assert any(line.startswith("○ ") for line in lines[1:])
    assert any("element" in line for line in lines)
    assert any(line.strip().startswith("→ ") for line in lines)
    assert _run("search", "--store", str(store), "the")[1].startswith(
        "nothing to search for"
    )
    out = _run("search", "--store", str(store), "zzzzqqq")[1].splitlines()
    assert out == ["no matches", "  no decision or element has the word 'zzzzqqq'"]
    code, out = _run("search", "--store", str(store), "--json")
    assert code == 0 and orjson.loads(out) == {"hits": None, "ok": True}


def test_no_store_exits_3(tmp_path: Path) -> None:
    code, _ = _run("search", "--store", str(tmp_path / "nowhere"), "x")
    assert code == 3


def test_bench_generate_writes_the_reference_bytes(tmp_path: Path) -> None:
    code, out = _run(
        "bench",
        "generate",
        str(tmp_path / "g"),
        "--decisions",
        "1000",
        "--writers",
        "3",
        "--elements",
        "100",
        "--segments",
    )
    assert (
        code == 0
        and out.strip()
        == f"generated 1000 decisions across 3 installs into {tmp_path / 'g'}"
    )
    seg = tmp_path / "g" / "segments" / "igen000000000000" / "000001-334.ndjson"
    assert hashlib.sha256(seg.read_bytes()).hexdigest().startswith("8f61f056e22df29e")
    code, _ = _run(
        "bench",
        "generate",
        str(tmp_path / "s"),
        "--decisions",
        "50",
        "--writers",
        "2",
        "--elements",
        "5",
    )
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "s" / "log").iterdir()) == [
        "igen000000000000.ndjson",
        "igen000000000001.ndjson",
    ]
    assert _run("bench", "generate", str(tmp_path / "x"), "--writers", "0")[0] == 2


def test_every_bench_command_has_an_example() -> None:
    from kgai_tui.cli.main import all_commands

    group = all_commands()["bench"]
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        assert command.help and "Example:" in command.help, name


def test_the_benchmark_runs_end_to_end(tmp_path: Path) -> None:
    from benchmarks.genlog import GenParams, write_store
    from benchmarks.search_suite import BenchOptions, render_report, run_bench

    write_store(tmp_path / "g", GenParams(400, 3, 40))
    report = run_bench(
        tmp_path / "g", BenchOptions(queries=24, scan_queries=4, process_runs=1)
    )
    assert report["queries"] == 24 and report["index_add_how"] == "appended"
    assert report["scan_all"]["n"] == 4 and report["fts_default"]["n"] == 24
    table = render_report(report)
    assert "| query p95 (in force) |" in table
    assert (tmp_path / "g" / "log" / "igen000000000000.ndjson").stat().st_size > 0
