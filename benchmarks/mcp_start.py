"""An MCP server's start, as an agent session sees it (issue 17: "start to first
answer < 1 s, resident < 300 MB").

Each run starts a real ``python -m kgai_tui mcp --store STORE`` child, speaks MCP's
stdio transport to it (newline-delimited JSON-RPC: ``initialize``, the
``initialized`` notification, then ``tools/call``), and times from the spawn to each
answer. After the last answer the child's peak resident size is read from
``/proc/PID/status`` (``VmHWM``) before it is told to stop by closing its stdin.
The store's read model (and caches) are warm: one untimed run goes first, with the
same private ``KGAI_TUI_CACHE_DIR`` as the timed ones.

Usage::

    python -m benchmarks.mcp_start /tmp/kgeng/kg1m --runs 5 \\
        --element feature:E001495 --about E001495
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from kgai_tui.demo import DEMO_STORE

#: The calls of one session, in order: (label, tool, arguments).
CALLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("status", "status", {}),
    ("history", "history", {"element": "{element}"}),
    ("recall --about", "recall", {"topic": "{about}"}),
    ("search", "search", {"query": "{about}"}),
)


@dataclass
class Session:
    """One server run: seconds from spawn to each answer, and peak RSS in MB."""

    initialized: float
    answers: dict[str, float]
    rss_mb: float


def _send(stdin: IO[bytes], obj: dict[str, Any]) -> None:
    stdin.write(orjson.dumps(obj) + b"\n")
    stdin.flush()


def _answer(stdout: IO[bytes], ident: int) -> dict[str, Any]:
    """Read messages until the response to ``ident`` (notifications are skipped)."""
    while True:
        line = stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output before answering")
        msg: dict[str, Any] = orjson.loads(line)
        if msg.get("id") == ident:
            if "error" in msg or msg.get("result", {}).get("isError"):
                raise RuntimeError(f"call {ident} failed: {msg}")
            return msg


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_session(store: Path, cache: Path, element: str, about: str) -> Session:
    """Start a server on ``store``, make the calls, stop it; what it cost."""
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(cache), "KGAI_TUI_PROGRESS": "off"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgai_tui", "mcp", "--store", str(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(
            proc.stdin,
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "mcp_start bench", "version": "1"},
                },
            },
        )
        _answer(proc.stdout, 0)
        initialized = time.perf_counter() - start
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        answers: dict[str, float] = {}
        for ident, (label, tool, args) in enumerate(CALLS, start=1):
            filled = {
                k: v.format(element=element, about=about) if isinstance(v, str) else v
                for k, v in args.items()
            }
            _send(
                proc.stdin,
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": filled},
                },
            )
            _answer(proc.stdout, ident)
            answers[label] = time.perf_counter() - start
        rss = _peak_rss_mb(proc.pid)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return Session(initialized, answers, rss)


def measure(
    store: Path, runs: int, element: str, about: str, cache: Path | None = None
) -> list[Session]:
    """One warm-up session, then ``runs`` timed ones, with one private cache (or
    ``cache``, a directory already holding the store's model and search index: at
    10M decisions a warm-up that builds them in the server takes many minutes)."""
    if cache is not None:
        run_session(store, cache, element, about)
        return [run_session(store, cache, element, about) for _ in range(runs)]
    with tempfile.TemporaryDirectory(prefix="kgai-mcp-bench-") as tmp:
        cache = Path(tmp)
        run_session(store, cache, element, about)  # builds the model: not timed
        # The first read of a store may answer from its replay while a detached
        # child writes the model; a second warm-up meets the finished model.
        time.sleep(1)
        run_session(store, cache, element, about)
        return [run_session(store, cache, element, about) for _ in range(runs)]


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


def render(rows: list[tuple[str, list[Session]]]) -> str:
    """A Markdown table: per store, the median time to each answer and the peak RSS."""
    labels = ["initialize", *(label for label, _, _ in CALLS)]
    head = "| store | " + " | ".join(f"to {x}" for x in labels) + " | peak RSS |"
    lines = [head, "|" + "---|" * (len(labels) + 2)]
    for name, sessions in rows:
        cells = [_ms([s.initialized for s in sessions])]
        cells += [_ms([s.answers[x] for s in sessions]) for x in labels[1:]]
        rss = max(s.rss_mb for s in sessions)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {rss:.0f} MB |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Measure the store given and the demo store; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--element", default="feature:E001495")
    parser.add_argument("--about", default="E001495")
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        help="a cache directory already holding STORE's model and search index",
    )
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgai-mcp-demo-") as tmp:
        import shutil

        demo = Path(tmp) / "demo"
        shutil.copytree(DEMO_STORE, demo)
        rows.append(
            ("demo", measure(demo, args.runs, "feature:AccountPage", "AccountPage"))
        )
        rows.append(
            (
                str(args.store),
                measure(args.store, args.runs, args.element, args.about, args.cache),
            )
        )
    print(f"load average before/after: {os.getloadavg()[0]:.2f}")
    print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
