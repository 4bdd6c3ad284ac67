"""Whole ``kgai-tui`` processes on a store: what a user waits for (issue 17).

Each read runs as a real child, ``python -m kgai_tui READ --store STORE --json`` with
its output sent to ``/dev/null``: one warm-up, then ``runs`` timed runs. A row gives
the median wall time and the largest peak RSS of the timed runs (``ru_maxrss`` of the
child from ``os.wait4``), in three columns:

* **model**: the store as a user has it (the read model on, the default);
* **off**: the same store with ``KGAI_TUI_READ_MODEL=off`` (every read replays or
  loads the whole projection, as before the model: the baseline);
* **demo**: the same read on the demo store (model on), the yardstick for "no slower
  on a big store than on a small one".

``record`` writes one new decision per run (on an element that exists) into a
throwaway copy of each store, given an identity with ``kgai-tui init``. "first
answer, empty cache" is one ``status`` with a fresh ``KGAI_TUI_CACHE_DIR`` (no model,
no engine cache). Every column has its own private cache directory; the user's is
never touched. A run waits until any background child of the previous one (the
engine cache is saved from a detached child) has exited, so runs do not overlap.

Each row is judged on the model column against the issue's targets; see
:data:`TARGETS`. Usage (the same as ``kgai-tui bench whole-process``)::

    python -m benchmarks.whole_process /tmp/kgeng/kg1m --runs 5 [--json]
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from benchmarks.bench_run import format_value

__all__ = [
    "COLUMNS",
    "ROWS",
    "TARGETS",
    "Subject",
    "WholeOptions",
    "render_whole_report",
    "rss_method",
    "run_measured",
    "run_whole_process",
    "wait_untagged",
]

#: The rows, in table order: key -> label.
ROWS: Final = {
    "version": "--version",
    "help": "--help",
    "status": "status",
    "heads_one": "heads ELEMENT",
    "history": "history ELEMENT",
    "resolve": "resolve REF",
    "conflicts": "conflicts",
    "context": "context --about TEXT",
    "as_of": "as-of T",
    "search_as_of": "search --as-of T TEXT",
    "people_as_of": "people --as-of T",
    "record": "record (one decision)",
    "export": "export --canonical",
    "first_answer": "first answer, empty cache (status)",
}

#: The columns: key -> heading.
COLUMNS: Final = {
    "model": "model (default)",
    "off": "KGAI_TUI_READ_MODEL=off",
    "demo": "demo store",
}


@dataclass(frozen=True)
class Target:
    """A row's target: a median below ``ms``, and at most ``demo_ratio`` times the
    demo store's median when given; ``rss`` says whether the 150 MB read limit
    holds (``rss_mb``: another limit for the row)."""

    ms: float
    demo_ratio: float | None = None
    rss: bool = True
    rss_mb: float | None = None

    @property
    def rss_limit(self) -> float:
        """The row's peak RSS limit (MB)."""
        return RSS_LIMIT_MB if self.rss_mb is None else self.rss_mb

    @property
    def text(self) -> str:
        """The target as the table prints it."""
        parts = [f"< {format_value(self.ms, 'ms')}"]
        if self.demo_ratio is not None:
            parts.append(f"<= {self.demo_ratio}x demo")
        if self.rss:
            parts.append(f"RSS < {self.rss_limit:.0f} MB")
        return ", ".join(parts)


#: Peak RSS any read must stay under (MB).
RSS_LIMIT_MB: Final = 150.0
_KG_READ: Final = Target(150.0, 1.5)
#: Issue 17's targets, by row (a write is judged on time only).
TARGETS: Final = {
    "version": Target(100.0),
    "help": Target(100.0),
    "status": _KG_READ,
    "heads_one": _KG_READ,
    "history": _KG_READ,
    "resolve": _KG_READ,
    "conflicts": _KG_READ,
    "context": Target(300.0),
    "as_of": Target(500.0),
    "search_as_of": Target(500.0),  # an as-of read: held to as-of's target
    "people_as_of": Target(500.0),  # likewise
    "record": Target(300.0, rss=False),
    # Issue 40: the whole projection, printed as it is read (305 MB at 1M).
    "export": Target(5_000.0, rss_mb=300.0),
    "first_answer": Target(10_000.0),
}


@dataclass(frozen=True)
class Subject:
    """What the reads of one store are about.

    Attributes:
        element: ``kind:name`` for heads, history, resolve and record.
        about: The text of ``context --about``.
        at: The moment of ``as-of`` (RFC3339 or a date).
    """

    element: str
    about: str
    at: str


@dataclass
class WholeOptions:
    """What ``bench whole-process`` does.

    Attributes:
        demo: The demo store (the third column).
        runs: Timed runs per cell (after ``warmups`` untimed ones).
        warmups: Untimed runs before them.
        only: Row keys to measure (default: every row of :data:`ROWS`).
        subject: The store's element, topic and moment (default: picked from it).
        demo_subject: The same for the demo store.
        src: Run ``kgai_tui`` from this source tree (its parent directory holds
            ``kgai_tui/``) instead of the one this Python imports.
        columns: The columns to measure (``model`` and ``demo`` always; ``off``
            replays the whole log per read: minutes each at 10M decisions).
        model_cache: A cache directory already holding the store's model, used
            as it is for the model column (a 10M model takes minutes to build).
        progress: Called with a short line before each step.
    """

    demo: Path
    runs: int = 5
    warmups: int = 1
    only: tuple[str, ...] = ()
    subject: Subject | None = None
    demo_subject: Subject | None = None
    src: Path | None = None
    columns: tuple[str, ...] = ("model", "off", "demo")
    model_cache: Path | None = None
    progress: Callable[[str], None] = field(default=lambda _msg: None)


# ------------------------------------------------------------------ processes


@functools.cache
def gnu_time() -> str | None:
    """GNU time's path, when it is installed (``apt-get install time``)."""
    path = shutil.which("time")
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except OSError:
        return None
    return path if "GNU" in done.stdout + done.stderr else None


def rss_method() -> str:
    """How :func:`run_measured` gets a child's peak RSS (for the report)."""
    if gnu_time():
        return "GNU time's %M (the child's own peak)"
    return (
        "wait4's ru_maxrss: a floor of this process's own peak "
        f"({resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB), "
        "which exec carries over"
    )


def run_measured(
    cmd: list[str],
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stdin: Path | None = None,
    capture: bool = False,
) -> tuple[float, float, int, bytes]:
    """Run ``cmd``; return its wall ms, its peak RSS (MiB), its exit code and stdout.

    Linux carries the peak RSS of the process that calls ``exec`` into the new
    program's ``ru_maxrss``: a child of a Python process that ever held 1 GB reports
    at least 1 GB. GNU time (a small C program) forks the command from its own small
    image, so its ``%M`` is the command's own; without it, ``wait4`` is used. GNU
    time adds its own fork and exec (about a millisecond) to the wall time.
    """
    timer = gnu_time()
    report = None
    if timer is not None:
        fd, report = tempfile.mkstemp(prefix="kgai-bench-rss-")
        os.close(fd)
        cmd = [timer, "-f", "%M", "-o", report, *cmd]
    try:
        with open(stdin or os.devnull, "rb") as fin:
            out = subprocess.PIPE if capture else subprocess.DEVNULL
            start = time.perf_counter()
            proc = subprocess.Popen(
                cmd, stdin=fin, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=cwd
            )
            data = proc.stdout.read() if proc.stdout is not None else b""
            _, status, usage = os.wait4(proc.pid, 0)
            elapsed = (time.perf_counter() - start) * 1000
            if proc.stdout is not None:
                proc.stdout.close()
        code = os.waitstatus_to_exitcode(status)
        rss = usage.ru_maxrss / 1024
        if report is not None:
            lines = Path(report).read_text().split()
            rss = (
                int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else float("nan")
            )
    finally:
        if report is not None:
            os.unlink(report)
    return elapsed, rss, code, data


@dataclass
class _Runner:
    """Starts ``python -m kgai_tui`` children tagged so their stragglers can be found."""

    src: Path | None
    tag: str = field(default_factory=lambda: uuid.uuid4().hex)

    def env(self, cache: Path, *, model: bool) -> dict[str, str]:
        env = dict(os.environ, KGAI_TUI_CACHE_DIR=str(cache), KGAI_BENCH_TAG=self.tag)
        env.pop("KGAI_TUI_READ_MODEL", None)
        if not model:
            env["KGAI_TUI_READ_MODEL"] = "off"
        if self.src is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(self.src), *filter(None, [os.environ.get("PYTHONPATH")])]
            )
        return env

    def run(
        self,
        args: list[str],
        env: dict[str, str],
        *,
        stdin: Path | None = None,
        capture: bool = False,
    ) -> tuple[float, float, int, bytes]:
        """Run one child; return wall ms, peak RSS MiB, exit code and (if asked) stdout."""
        cmd = [sys.executable, "-m", "kgai_tui", *args]
        done = run_measured(cmd, env=env, cwd=self.src, stdin=stdin, capture=capture)
        self.settle()
        return done

    def settle(self, timeout_s: float = 900.0) -> None:
        """Wait until no process but this one carries this run's tag (the engine
        cache is written by a detached grandchild after the answer)."""
        wait_untagged(self.tag, timeout_s)


def wait_untagged(tag: str, timeout_s: float = 900.0) -> None:
    """Wait until no process but this one has ``KGAI_BENCH_TAG=tag`` in its
    environment: the detached children a measured command left are done."""
    needle = f"KGAI_BENCH_TAG={tag}".encode()
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline and _tagged(needle):
        time.sleep(0.1)


def _tagged(needle: bytes) -> bool:
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    return True
        except OSError:
            continue
    return False


# ------------------------------------------------------------------ the stores


@dataclass
class _Store:
    """One column's store, cache directory and mode."""

    root: Path
    copy: Path  # the throwaway copy ``record`` writes into
    cache: Path
    model: bool
    subject: Subject


def _log_info(root: Path) -> dict[str, Any]:
    files = [p for p in (root / "log").iterdir() if p.is_file()]
    return {"shards": len(files), "log_bytes": sum(p.stat().st_size for p in files)}


def _json_of(runner: _Runner, args: list[str], env: dict[str, str]) -> Any:
    _, _, code, data = runner.run(args, env, capture=True)
    if code != 0:
        raise RuntimeError(f"`kgai-tui {' '.join(args)}` exited {code}")
    return orjson.loads(data)


def pick_subject(runner: _Runner, root: Path, env: dict[str, str]) -> Subject:
    """The first element ``heads`` lists, its name as the topic, and the middle
    moment of its history (RFC3339) as the as-of instant."""
    heads = _json_of(runner, ["heads", "--store", str(root), "--json"], env)["heads"]
    first = heads[0]
    element = f"{first['kind']}:{first['name']}"
    history = _json_of(
        runner, ["history", element, "--store", str(root), "--json"], env
    )
    moments = sorted(d["when"] for d in history["decisions"] if d.get("when"))
    at = moments[len(moments) // 2] if moments else "2026-01-01"
    return Subject(element, first["name"], at)


def _argv(
    key: str, store: _Store, nth: int, scratch: Path
) -> tuple[list[str], Path | None]:
    """The arguments of row ``key`` (and a stdin file for ``record``)."""
    s = store.subject
    at = ["--store", str(store.root), "--json"]
    if key == "version":
        return ["--version"], None
    if key == "help":
        return ["--help"], None
    if key in ("status", "first_answer", "conflicts"):
        return ["conflicts" if key == "conflicts" else "status", *at], None
    if key == "heads_one":
        return ["heads", s.element, *at], None
    if key == "history":
        return ["history", s.element, *at], None
    if key == "resolve":
        return ["resolve", s.element, *at], None
    if key == "context":
        return ["context", "--about", s.about, *at], None
    if key == "as_of":
        return ["as-of", s.at, *at], None
    if key == "search_as_of":
        return ["search", "--as-of", s.at, s.about, *at], None
    if key == "people_as_of":
        return ["people", "--as-of", s.at, *at], None
    if key == "export":
        return ["export", "--canonical", *at], None
    if key == "record":
        kind, _, name = s.element.partition(":")
        doc = {
            "decision": {
                "title": f"whole-process bench {nth} {uuid.uuid4().hex[:12]}",
                "rationale": "a decision written by benchmarks/whole_process.py",
                "mutations": [{"op": "upsert_element", "kind": kind, "name": name}],
            }
        }
        path = scratch / f"record-{uuid.uuid4().hex}.json"
        path.write_bytes(orjson.dumps(doc))
        return ["record", str(path), "--store", str(store.copy), "--json"], path
    raise KeyError(key)


# ------------------------------------------------------------------ the run


def run_whole_process(store: Path, opts: WholeOptions) -> dict[str, Any]:
    """Measure every row on ``store`` (model on and off) and on the demo store.

    Args:
        store: The store root (it holds ``log/``); it is only read (``record``
            writes into a copy).
        opts: Runs, rows, subjects and the demo store.

    Returns:
        ``{"ok", "store", "demo", "date", "machine", "options", "subjects", "rows",
        "notes"}``; ``rows`` follow :data:`ROWS` order (or ``opts.only``).
    """
    scratch = Path(tempfile.mkdtemp(prefix="kgai-bench-whole-"))
    try:
        return _run(store.resolve(), opts, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(root: Path, opts: WholeOptions, scratch: Path) -> dict[str, Any]:
    say = opts.progress
    keys = [k for k in ROWS if not opts.only or k in opts.only]
    runner = _Runner(opts.src.resolve() if opts.src else None)
    demo = opts.demo.resolve()
    report: dict[str, Any] = {
        "ok": True,
        "store": str(root),
        "demo": str(demo),
        "date": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": [round(x, 2) for x in os.getloadavg()],
            "rss": rss_method(),
        },
        "options": {"runs": opts.runs, "warmups": opts.warmups, "rows": keys},
        "store_info": _log_info(root),
        "demo_info": _log_info(demo),
    }
    stores: dict[str, _Store] = {}
    columns = [c for c in COLUMNS if c in opts.columns or c != "off"]
    report["options"]["columns"] = columns
    for col, base, model in (
        ("model", root, True),
        ("off", root, False),
        ("demo", demo, True),
    ):
        if col not in columns:
            continue
        cache = scratch / f"cache-{col}"
        if col == "model" and opts.model_cache is not None:
            cache = opts.model_cache
        subject = opts.demo_subject if col == "demo" else opts.subject
        if subject is None:
            say(f"{col}: picking an element (this also warms the cache) ...")
            subject = pick_subject(runner, base, runner.env(cache, model=model))
        stores[col] = _Store(base, base, cache, model, subject)
    report["subjects"] = {
        "store": vars(stores["model"].subject),
        "demo": vars(stores["demo"].subject),
    }

    if "record" in keys:
        _make_copies(runner, stores, scratch, say)

    rows = []
    for key in keys:
        cells = {
            col: _measure(runner, key, stores[col], opts, scratch, say)
            for col in columns
        }
        rows.append(_judge(key, cells))
    report["rows"] = rows
    report["machine"]["load_after"] = [round(x, 2) for x in os.getloadavg()]
    report["notes"] = _notes(report)
    return report


def _make_copies(
    runner: _Runner,
    stores: dict[str, _Store],
    scratch: Path,
    say: Callable[[str], None],
) -> None:
    """One throwaway copy per store (model and off share the big one), with an identity."""
    copies: dict[Path, Path] = {}
    for col, store in stores.items():
        if store.root not in copies:
            target = scratch / f"copy-{col}"
            say(f"copying {store.root} for record ...")
            shutil.copytree(store.root / "log", target / "log")
            for name in ("kg.config.json",):
                if (store.root / name).is_file():
                    shutil.copy2(store.root / name, target / name)
            env = runner.env(store.cache, model=store.model)
            _, _, code, _ = runner.run(["init", "--store", str(target), "--json"], env)
            if code != 0:
                raise RuntimeError(f"`kgai-tui init --store {target}` exited {code}")
            copies[store.root] = target
        store.copy = copies[store.root]


def _measure(
    runner: _Runner,
    key: str,
    store: _Store,
    opts: WholeOptions,
    scratch: Path,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """One cell: warm-ups then timed runs (one run with an empty cache for
    ``first_answer``)."""
    say(
        f"{ROWS[key]} [{key}] on {store.root.name} (model {'on' if store.model else 'off'}) ..."
    )
    if key == "first_answer":
        cache = scratch / f"empty-{uuid.uuid4().hex}"
        env = runner.env(cache, model=store.model)
        args, _ = _argv(key, store, 0, scratch)
        ms, rss, code, _ = runner.run(args, env)
        shutil.rmtree(cache, ignore_errors=True)
        return _cell([ms], [rss], [code])
    env = runner.env(store.cache, model=store.model)
    times, peaks, codes = [], [], []
    for n in range(opts.warmups + opts.runs):
        args, stdin = _argv(key, store, n, scratch)
        ms, rss, code, _ = runner.run(args, env, stdin=stdin)
        if n >= opts.warmups:
            times.append(ms)
            peaks.append(rss)
            codes.append(code)
    return _cell(times, peaks, codes)


def _cell(times: list[float], peaks: list[float], codes: list[int]) -> dict[str, Any]:
    return {
        "n": len(times),
        "median_ms": round(statistics.median(times), 1),
        "min_ms": round(min(times), 1),
        "max_ms": round(max(times), 1),
        "rss_mb": round(max(peaks), 1),
        "exit_codes": sorted(set(codes)),
    }


def _judge(key: str, cells: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The row with its verdicts (on the model column)."""
    target = TARGETS[key]
    model, demo = cells["model"], cells["demo"]
    ok = model["exit_codes"] == [0] and model["median_ms"] < target.ms
    ratio = model["median_ms"] / demo["median_ms"] if demo["median_ms"] else None
    if target.demo_ratio is not None:
        ok = ok and ratio is not None and ratio <= target.demo_ratio
    rss = "-"
    if target.rss:
        rss = "met" if model["rss_mb"] < target.rss_limit else "missed"
    return {
        "key": key,
        "label": ROWS[key],
        "cells": cells,
        "ratio_to_demo": None if ratio is None else round(ratio, 2),
        "target": target.text,
        "time": "met" if ok else "missed",
        "rss": rss,
    }


def _notes(report: dict[str, Any]) -> list[str]:
    notes = []
    for row in report["rows"]:
        for col, cell in row["cells"].items():
            if cell["exit_codes"] != [0]:
                notes.append(f"{row['label']} ({col}) exited {cell['exit_codes']}")
    return notes


# ------------------------------------------------------------------ the table


def render_whole_report(report: dict[str, Any]) -> str:
    """Render a ``bench whole-process`` report as Markdown (a header, the table, notes).

    Args:
        report: What :func:`run_whole_process` returned.

    Returns:
        Text ready to paste into ``docs/performance.md``.
    """
    info, demo = report["store_info"], report["demo_info"]
    machine, opts = report["machine"], report["options"]
    subj, dsubj = report["subjects"]["store"], report["subjects"]["demo"]
    lines = [
        f"store: {report['store']} ({info['shards']} shards, "
        f"{info['log_bytes'] / 1e6:.1f} MB of log); demo: {report['demo']} "
        f"({demo['shards']} shards, {demo['log_bytes'] / 1e3:.0f} kB)",
        f"date: {report['date']}; {machine['cpus']} CPUs, Python {machine['python']}; "
        f"load average {_load(machine['load_before'])} before, "
        f"{_load(machine.get('load_after', []))} after",
        f"runs: median of {opts['runs']} after {opts['warmups']} warm-up(s) per cell "
        "(first answer: one run); RSS: the largest peak of those runs, from "
        f"{machine.get('rss', 'wait4')}",
        f"store: ELEMENT {subj['element']}, TEXT {subj['about']!r}, T {subj['at']}; "
        f"demo: ELEMENT {dsubj['element']}, TEXT {dsubj['about']!r}, T {dsubj['at']}",
        "",
        "| read | "
        + " | ".join(f"{h} | RSS" for h in COLUMNS.values())
        + " | x demo | target | time | RSS |",
        "|---|" + "---|---|" * len(COLUMNS) + "---|---|---|---|",
    ]
    for row in report["rows"]:
        cells = " | ".join(
            f"{format_value(c['median_ms'], 'ms')} | {format_value(c['rss_mb'], 'MB')}"
            for c in (row["cells"].get(col) or _SKIPPED for col in COLUMNS)
        )
        ratio = "-" if row["ratio_to_demo"] is None else f"{row['ratio_to_demo']:.1f}"
        lines.append(
            f"| {row['label']} | {cells} | {ratio} | {row['target']} "
            f"| {row['time']} | {row['rss']} |"
        )
    judged = [
        v for row in report["rows"] for v in (row["time"], row["rss"]) if v != "-"
    ]
    lines += ["", f"{judged.count('met')} of {len(judged)} targets met."]
    lines += [f"- {note}" for note in report["notes"]]
    return "\n".join(lines)


#: A column not measured (``--columns``).
_SKIPPED: Final = {"median_ms": None, "rss_mb": None}


def _load(values: list[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values) or "-"


if __name__ == "__main__":
    from kgai_tui.cli.bench import bench_whole_process_command

    bench_whole_process_command.main(prog_name="python -m benchmarks.whole_process")
