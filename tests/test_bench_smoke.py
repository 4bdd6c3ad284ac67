"""``kgai-tui bench run`` on a 10k-decision generated store: every row, valid JSON.

A smoke test only: it never asserts a timing (the numbers live in
docs/performance.md), it checks the shape of what the benchmark prints.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from benchmarks.bench_run import format_value, render_run_report
from benchmarks.engine_bench import ROW_KEYS
from benchmarks.genlog import GenParams, write_store
from kgai_tui.cli.main import main

ROW_FIELDS = [
    "key",
    "label",
    "unit",
    "n",
    "best",
    "median",
    "p95",
    "target",
    "reference",
    "verdict",
    "note",
]


def test_bench_run_prints_every_row_as_json_and_as_a_table(tmp_path: Path) -> None:
    root = tmp_path / "kg10k"
    write_store(root, GenParams(10_000, 30, 10_000))
    result = CliRunner().invoke(
        main,
        ["bench", "run", str(root), "--iterations", "1", "--budget", "1", "--json"],
    )
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["ok"] is True
    assert report["store_info"]["decisions"] == 10_000
    assert report["store_info"]["writers"] == 30
    assert [row["key"] for row in report["rows"]] == list(ROW_KEYS)
    for row in report["rows"]:
        assert list(row) == ROW_FIELDS
        assert row["n"] >= 1, row  # every row was measured
        assert row["median"] is not None and row["median"] >= 0, row
        assert row["verdict"] in {"pass", "MISS", "-"}
    by_key = {row["key"]: row for row in report["rows"]}
    assert by_key["search_default"]["n"] >= 200
    assert "events replayed" in by_key["as_of_100"]["note"]
    assert by_key["as_of_100"]["note"].endswith("10000 events replayed")
    # The caches were private temporary ones, not the user's.
    assert not (tmp_path / "home" / ".cache" / "kgai-tui").exists()
    # the second `status` process and the in-process open found the cache
    assert by_key["engine_open"]["note"] == "path: warm"
    assert "background child" in by_key["cold_open_process"]["note"]

    table = render_run_report(report)
    lines = table.splitlines()
    for key, (label, target) in ROW_KEYS.items():
        assert any(line.startswith(f"| {label} |") for line in lines), key
        assert target.text in table
    assert "| operation | n | best | median | p95 |" in table


def test_format_value() -> None:
    assert format_value(None, "ms") == "-"
    assert format_value(0.0123, "ms") == "0.012 ms"
    assert format_value(35.44, "ms") == "35.4 ms"
    assert format_value(812.4, "ms") == "812 ms"
    assert format_value(12_345.0, "ms") == "12.3 s"
    assert format_value(2107.4, "MB") == "2107 MB"
