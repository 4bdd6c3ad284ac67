"""``kgai-tui bench run`` on a 10k-decision generated store: every row, valid JSON;
``kgai-tui bench whole-process`` on a 2k one.

A smoke test only: it never asserts a timing (the numbers live in
docs/performance.md), it checks the shape of what the benchmark prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from click.testing import CliRunner

from benchmarks.bench_run import format_value, render_run_report
from benchmarks.engine_bench import ROW_KEYS
from benchmarks.genlog import GenParams, write_store
from benchmarks.whole_process import COLUMNS, ROWS, TARGETS, render_whole_report
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
    # the whole store keeps no cache: the in-process open read every line, and
    # the second process says so
    assert by_key["engine_open"]["note"] == "path: cold"
    assert "every line read again" in by_key["warm_open_process"]["note"]

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


def test_bench_whole_process_prints_its_rows_as_json_and_as_a_table(
    tmp_path: Path,
) -> None:
    """``bench whole-process`` on a 2k-decision store: a few rows, one run each."""
    root = tmp_path / "kg2k"
    write_store(root, GenParams(2_000, 4, 200))
    only = ["version", "status", "heads_one", "record", "first_answer"]
    result = CliRunner().invoke(
        main,
        [
            "bench",
            "whole-process",
            str(root),
            "--runs",
            "1",
            "--warmups",
            "0",
            "--only",
            ",".join(only),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert [row["key"] for row in report["rows"]] == only
    assert report["subjects"]["store"]["element"].startswith("feature:E")
    for row in report["rows"]:
        assert list(row["cells"]) == list(COLUMNS)
        for cell in row["cells"].values():
            assert cell["n"] == 1 and cell["exit_codes"] == [0], row
            assert cell["median_ms"] > 0 and cell["rss_mb"] > 0, row
        assert row["time"] in {"met", "missed"}
        assert row["rss"] in ({"-"} if row["key"] == "record" else {"met", "missed"})
        assert row["target"] == TARGETS[row["key"]].text
    # the reads and the record left the store as it was (record wrote to a copy),
    # and no cache went to the user's cache directory
    assert sorted(p.name for p in root.iterdir()) == ["log"]
    assert not (tmp_path / "home" / ".cache" / "kgai-tui").exists()

    table = render_whole_report(report)
    for key in only:
        assert f"| {ROWS[key]} |" in table
    assert "| read | model (default) | RSS | KGAI_TUI_READ_MODEL=off | RSS |" in table


def test_bench_whole_process_refuses_an_unknown_row(tmp_path: Path) -> None:
    root = tmp_path / "kg"
    write_store(root, GenParams(100, 2, 10))
    result = CliRunner().invoke(
        main, ["bench", "whole-process", str(root), "--only", "status,nope"]
    )
    assert result.exit_code == 2
    assert "unknown rows: nope" in result.output


def test_bench_whole_process_without_the_off_column_on_a_warm_model_cache(
    tmp_path: Path,
) -> None:
    """At 10M the off column (a replay per read) is left out, and the model column
    reads a cache built beforehand; the table shows the missing column as "-"."""
    root = tmp_path / "kg"
    write_store(root, GenParams(300, 3, 30))
    cache = tmp_path / "warm"
    env = {"KGAI_TUI_CACHE_DIR": str(cache)}
    warm = CliRunner().invoke(main, ["status", "--store", str(root), "--json"], env=env)
    assert warm.exit_code == 0, warm.output
    args = ["bench", "whole-process", str(root), "--runs", "1", "--warmups", "1"]
    args += ["--only", "status,as_of", "--columns", "model,demo"]
    args += ["--model-cache", str(cache), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)
    assert report["options"]["columns"] == ["model", "demo"]
    for row in report["rows"]:
        assert list(row["cells"]) == ["model", "demo"]
        assert all(c["exit_codes"] == [0] for c in row["cells"].values()), row
    assert "| - | - |" in render_whole_report(report)
    # The warm-up's as-of stored the moments in the cache given.
    assert any(cache.glob("*/model.sqlite"))
    bad = CliRunner().invoke(main, [*args[:-1], "--columns", "model,nope"])
    assert bad.exit_code == 2 and "--columns" in bad.output


def test_moment_reads_prints_the_same_counts_through_the_model_and_whole(
    tmp_path: Path,
) -> None:
    """``benchmarks/moment_reads.py``: a line per moment; the counts and row
    numbers it prints are the same read through the model as walked whole."""
    import os
    import re
    import subprocess
    import sys

    from kgai_tui.core.engine.open import open_engine
    from kgai_tui.core.model.open import open_model
    from kgai_tui.core.reads.moments import TimeCursor

    root = tmp_path / "store"
    write_store(root, GenParams(2000, 4, 60))
    cache = tmp_path / "cache"
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(cache)}
    os.environ["KGAI_TUI_CACHE_DIR"] = str(cache)
    try:
        open_model(root).close()
        TimeCursor.of_store(open_engine(root))  # saves the time index
    finally:
        del os.environ["KGAI_TUI_CACHE_DIR"]
    script = Path(__file__).parent.parent / "benchmarks" / "moment_reads.py"
    runs = []
    for extra in ([], ["--whole"]):
        out = subprocess.run(
            [sys.executable, str(script), str(root), "--cuts", "3", *extra],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        ).stdout.splitlines()
        assert out[0].startswith("open and history: ")
        assert len(out) == 4 and all("timeline" in line for line in out[1:])
        runs.append([re.findall(r"\(([^)]*)\)", line)[:3] for line in out[1:]])
    assert runs[0] == runs[1] and runs[0][0][0] != "0, 0", runs


def test_diff_windows_compares_two_trees_row_by_row(tmp_path: Path) -> None:
    """``benchmarks/diff_windows.py``: a row per window and run, both trees' time
    and peak, and whether they printed the same bytes (the same tree twice: yes;
    a tree whose diff prints otherwise: NO)."""
    import shutil
    import subprocess
    import sys

    from kgai_tui.demo import DEMO_STORE

    repo = Path(__file__).parent.parent
    store = shutil.copytree(DEMO_STORE, tmp_path / "demo-store")
    other = tmp_path / "other"
    shutil.copytree(repo / "kgai_tui", other / "kgai_tui")
    renderer = other / "kgai_tui" / "core" / "reads" / "diff.py"
    source = renderer.read_text()
    assert '"ok": True,' in source
    renderer.write_text(source.replace('"ok": True,', '"ok": 1,'))
    script = repo / "benchmarks" / "diff_windows.py"
    argv = [sys.executable, str(script), str(store), "--runs", "1"]
    argv += ["--before", str(repo), str(tmp_path / "c1")]
    argv += ["--window", "2026-01-01", "2026-03-31"]

    def rows(after: Path, cache: str) -> list[str]:
        return subprocess.run(
            [*argv, "--after", str(after), str(tmp_path / cache)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout.splitlines()

    same = rows(repo, "c2")
    assert same[0].startswith("| window | run | before | after |")
    assert len(same) == 3 and same[2].endswith("| yes |"), same
    assert "2026-01-01..2026-03-31 | 1 |" in same[2]
    differs = rows(other, "c3")
    assert differs[2].endswith("| NO |"), differs


def test_after_first_read_waits_for_the_build_and_compares_two_trees(
    tmp_path: Path,
) -> None:
    """``benchmarks/after_first_read.py``: the first read, the wait for its
    detached build, then each read, both trees' time and peak, whether they
    printed the same bytes, and what each left in its cache (the model and the
    time index, never an engine cache)."""
    import os
    import shutil
    import subprocess
    import sys

    from kgai_tui.demo import DEMO_STORE

    repo = Path(__file__).parent.parent
    store = shutil.copytree(DEMO_STORE, tmp_path / "demo-store")
    script = repo / "benchmarks" / "after_first_read.py"
    argv = [sys.executable, str(script), str(store)]
    argv += ["--before", str(repo), "--after", str(repo)]
    argv += ["--read", "diff 2026-01-01 2026-03-31 --json"]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    got = subprocess.run(
        argv, capture_output=True, text=True, check=True, timeout=120, env=env
    ).stdout.splitlines()
    assert not list(scratch.iterdir())  # its caches removed (0.8 GB each at 1M)
    assert got[0] == "| read | before | after | same bytes |", got
    assert got[2].startswith("| status --json (first read) |") and got[2].endswith(
        "| yes |"
    )
    # The detached build's time and peak, read from /proc while it runs.
    assert re.fullmatch(
        r"\| its detached build, to the end \| [\d.]+ s, [1-9]\d* MB"
        r" \| [\d.]+ s, [1-9]\d* MB \| - \|",
        got[3],
    ), got[3]
    assert got[4].startswith("| diff 2026-01-01 2026-03-31 --json |")
    assert got[4].endswith("| yes |")
    kept = got[5].split(": ")[1].split()
    assert {"model.sqlite", "engine.time.bin"} <= set(kept) and "engine.bin" not in kept


def test_append_then_read_grows_the_store_and_reads_it_with_both_trees(
    tmp_path: Path,
) -> None:
    """``benchmarks/append_then_read.py``: each round appends the next generated
    events and both trees' first reads count exactly them (the script stops on a
    read that counts otherwise); a wrong ``--events`` is refused, not appended."""
    import subprocess
    import sys

    repo = Path(__file__).parent.parent
    root = tmp_path / "kg2k"
    write_store(root, GenParams(2_000, 3, 50))
    script = repo / "benchmarks" / "append_then_read.py"
    argv = [sys.executable, str(script), str(root), "--writers", "3"]
    argv += ["--elements", "50", "--append", "100", "--rounds", "2"]
    argv += ["--before", str(repo), str(tmp_path / "c1")]
    argv += ["--after", str(repo), str(tmp_path / "c2")]
    done = subprocess.run(
        [*argv, "--events", "2000"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert [line.split(":")[0] for line in out[:4]] == [
        "round 1 (2100 events) before",
        "round 1 (2100 events) after",
        "round 2 (2200 events) after",
        "round 2 (2200 events) before",
    ]
    assert [line.split(":")[0] for line in out[4:6]] == ["before", "after"]
    assert " of 2 over 1 s" in out[4]
    assert out[6] == "the store now holds 2200 events"
    size = sum(p.stat().st_size for p in (root / "log").iterdir())
    wrong = subprocess.run(
        [*argv, "--events", "2000"], capture_output=True, text=True, timeout=300
    )
    assert wrong.returncode != 0
    assert sum(p.stat().st_size for p in (root / "log").iterdir()) == size
    # Taking turns on one cache: one read per round, the trees alternating.
    turns = subprocess.run(
        [*argv, "--events", "2200", "--taking-turns", "--pause", "0.1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert turns.returncode == 0, turns.stderr
    assert [line.split(":")[0] for line in turns.stdout.splitlines()] == [
        "round 1 (2300 events) before",
        "round 2 (2400 events) after",
        "before",
        "after",
        "the store now holds 2400 events",
    ]


def test_live_reload_times_the_new_present_and_the_history(tmp_path: Path) -> None:
    """``benchmarks/live_reload.py``: the explorer in tmux picks up each round's
    appended events (the header's count changes, the slider gets its moments);
    a wrong ``--events`` is refused before anything is appended."""
    import re
    import subprocess
    import sys

    repo = Path(__file__).parent.parent
    root = tmp_path / "kg2k"
    write_store(root, GenParams(2_000, 3, 50))
    script = repo / "benchmarks" / "live_reload.py"
    argv = [sys.executable, str(script), str(root), "--writers", "3"]
    argv += ["--elements", "50", "--append", "100", "--rounds", "1"]
    argv += ["--src", str(repo), "--cache-dir", str(tmp_path / "cache")]
    argv += ["--timeout", "60"]
    size = sum(p.stat().st_size for p in (root / "log").iterdir())
    wrong = subprocess.run(
        [*argv, "--events", "1999"], capture_output=True, text=True, timeout=300
    )
    assert wrong.returncode != 0
    assert "holds 2000 events" in wrong.stderr
    assert sum(p.stat().st_size for p in (root / "log").iterdir()) == size
    done = subprocess.run(
        [*argv, "--events", "2000"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert re.fullmatch(r"opened in \d+\.\d\d s", out[0]), out
    assert re.fullmatch(
        r"round 1 \(2100 events\): the new present \d+\.\d\d s,"
        r" the history \d+\.\d\d s",
        out[1],
    ), out
    assert out[2] == "the store now holds 2100 events"


def test_recall_build_compares_two_trees_row_by_row(tmp_path: Path) -> None:
    """``benchmarks/recall_build.py``: a row per case and run with both trees'
    time and memory, and whether they built the same bytes (the same tree twice:
    yes; a tree whose postings keep repeated pairs: NO)."""
    import shutil
    import subprocess
    import sys

    from kgai_tui.demo import DEMO_STORE

    repo = Path(__file__).parent.parent
    other = tmp_path / "other"
    shutil.copytree(repo / "kgai_tui", other / "kgai_tui")
    fields = other / "kgai_tui" / "core" / "recall" / "fields.py"
    source = fields.read_text()
    dedupe = "np.not_equal(key[1:], key[:-1], out=keep[1:])"
    assert dedupe in source
    fields.write_text(source.replace(dedupe, "keep[1:] = True"))
    script = repo / "benchmarks" / "recall_build.py"

    def rows(after: Path) -> list[str]:
        argv = [sys.executable, str(script), str(DEMO_STORE), "--runs", "1"]
        argv += ["--before", str(repo), "--after", str(after), "--synthetic", "3000"]
        return subprocess.run(
            argv, capture_output=True, text=True, check=True, timeout=180
        ).stdout.splitlines()

    same = rows(repo)
    assert same[0].startswith("| case | run | before:")
    assert len(same) == 4, same
    assert same[2].startswith("| store | 1 |") and same[2].endswith("| yes |")
    assert same[3].startswith("| synthetic | 1 |") and same[3].endswith("| yes |")
    differs = rows(other)
    assert differs[3].endswith("| NO |"), differs
