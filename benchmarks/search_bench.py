"""Benchmark search on a store: the tantivy index vs SQLite FTS5 vs the scan scorer.

The same as ``kgai-tui bench search``; results and commands are in
docs/performance.md.

Usage:
    python benchmarks/search_bench.py /tmp/kgbench/s100k --queries 240 [--json]
"""

from __future__ import annotations

from kgai_tui.cli.bench import bench_search_command

if __name__ == "__main__":
    bench_search_command.main(prog_name="search_bench.py")
