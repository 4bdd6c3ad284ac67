"""S3 sync as whole processes: a cold clone, a no-op sync and the first read (issue 19).

For each size, the project's generator writes the reference layout
(``kgai-tui bench generate DIR --decisions N --writers 30 --segments``: one segment
``segments/<install>/000001-<count>.ndjson`` per writer, spec 9.1) and the segments
are uploaded to the local S3-compatible server the tests use
(``tests/sync_s3/s3_server.py``: moto's S3 on 127.0.0.1, one request at a time).
Then, ``runs`` times, each in a new empty store (``kgai-tui init``) with its own
empty ``KGAI_TUI_CACHE_DIR``, three whole processes are timed under
``/usr/bin/time -v`` (wall clock and peak RSS):

* **cold clone**: ``kgai-tui sync --store S --remote s3://bench/nN --json``, which
  pulls every segment into the empty store;
* **no-op sync**: ``kgai-tui sync --store S --json`` right after (the remote is
  remembered; nothing to push or pull);
* **first read**: ``kgai-tui status --store S --json`` after that.

Every run checks the answers (``applied`` = N, then 0) and, once per size, that each
pulled shard is byte for byte its segment. A run waits until background children
of the previous process (caches saved from a detached child) have exited.
Usage::

    python -m benchmarks.s3_sync [--sizes 20000,100000,1000000] [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from benchmarks.whole_process import wait_untagged

ROOT: Final = Path(__file__).resolve().parent.parent
SERVER: Final = ROOT / "tests" / "sync_s3" / "s3_server.py"
KGAI: Final = [sys.executable, "-m", "kgai_tui"]
BUCKET: Final = "bench"
WRITERS: Final = 30
#: What the reference engine reports (spec 9.4), for the table's last column.
REFERENCE: Final = {
    "clone": "20k cold clone 2.0 s; 40k 3.4 s",
    "noop": "45k no-op sync 0.55 s",
}
STEPS: Final = {"clone": "cold clone", "noop": "no-op sync", "read": "first read"}


@dataclass
class Measured:
    """One timed process: wall seconds and peak RSS in MiB."""

    seconds: float
    rss_mib: float


@dataclass
class SizeResult:
    """Every run of one size, by step."""

    size: int
    segments_mib: float
    upload_s: float
    runs: dict[str, list[Measured]] = field(default_factory=dict)

    def median(self, step: str) -> Measured:
        """The median wall time and the largest peak RSS of a step's runs."""
        rows = self.runs[step]
        return Measured(
            statistics.median(r.seconds for r in rows), max(r.rss_mib for r in rows)
        )


def _parse_time_v(report: str) -> Measured:
    """Wall clock and peak RSS from GNU time's ``-v`` report."""
    wall = rss = float("nan")
    for line in report.splitlines():
        line = line.strip()
        if line.startswith("Elapsed (wall clock) time"):
            clock = line.rsplit(" ", 1)[-1].split(":")
            wall = sum(float(part) * 60**i for i, part in enumerate(reversed(clock)))
        elif line.startswith("Maximum resident set size (kbytes)"):
            rss = int(line.rsplit(" ", 1)[-1]) / 1024
    return Measured(wall, rss)


class Runner:
    """Runs ``kgai-tui`` children tagged, so their detached stragglers can be awaited."""

    def __init__(self, cache: Path) -> None:
        """Use ``cache`` as every child's ``KGAI_TUI_CACHE_DIR``."""
        self.tag = uuid.uuid4().hex
        self.env = dict(
            os.environ,
            KGAI_TUI_CACHE_DIR=str(cache),
            KGAI_BENCH_TAG=self.tag,
            KGAI_TUI_PROGRESS="off",
            PYTHONPATH=str(ROOT),
        )

    def run(self, args: list[str]) -> tuple[Measured, Any]:
        """Run ``kgai-tui args`` under ``/usr/bin/time -v``; return time and JSON."""
        fd, report = tempfile.mkstemp(prefix="kgai-s3-bench-")
        os.close(fd)
        try:
            done = subprocess.run(
                ["/usr/bin/time", "-v", "-o", report, *KGAI, *args],
                env=self.env,
                cwd=ROOT,
                capture_output=True,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            measured = _parse_time_v(Path(report).read_text())
        finally:
            os.unlink(report)
        if done.returncode != 0:
            raise RuntimeError(
                f"kgai-tui {' '.join(args)} exited {done.returncode}: "
                f"{done.stderr.decode()[-500:]}"
            )
        self.settle()
        return measured, json.loads(done.stdout) if done.stdout.strip() else None

    def settle(self, timeout_s: float = 900.0) -> None:
        """Wait until no other process carries this runner's tag."""
        wait_untagged(self.tag, timeout_s)


def _client() -> Any:
    import boto3  # type: ignore[import-untyped]

    return boto3.client("s3", region_name="us-east-1")


def _generate(out: Path, size: int) -> list[Path]:
    """The reference layout from the project's generator (a whole process)."""
    subprocess.run(
        [
            *KGAI,
            "bench",
            "generate",
            str(out),
            "--decisions",
            str(size),
            "--writers",
            str(WRITERS),
            "--segments",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return sorted((out / "segments").glob("*/*.ndjson"))


def _upload(client: Any, prefix: str, base: Path, segments: list[Path]) -> float:
    start = time.perf_counter()
    for path in segments:
        key = f"{prefix}/{path.relative_to(base).as_posix()}"
        client.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())
    return time.perf_counter() - start


def _check_clone(store: Path, base: Path, segments: list[Path]) -> None:
    """Each pulled shard must be its segment, byte for byte."""
    for seg in segments:
        shard = store / "log" / f"{seg.parent.name}.ndjson"
        if shard.read_bytes() != seg.read_bytes():
            raise RuntimeError(f"{shard} differs from the segment {seg}")


def measure_size(work: Path, client: Any, size: int, runs: int) -> SizeResult:
    """Generate, upload and time ``runs`` clones of one size."""
    gen = work / f"gen-{size}"
    segments = _generate(gen, size)
    prefix = f"n{size}"
    upload = _upload(client, prefix, gen, segments)
    mib = sum(p.stat().st_size for p in segments) / 2**20
    result = SizeResult(size, mib, upload, {k: [] for k in STEPS})
    url = f"s3://{BUCKET}/{prefix}"
    for run in range(runs):
        store = work / f"store-{size}-{run}"
        cache = work / f"cache-{size}-{run}"
        runner = Runner(cache)
        runner.run(["init", "--store", str(store), "--actor", "bench", "--json"])
        clone, out = runner.run(
            ["sync", "--store", str(store), "--remote", url, "--json"]
        )
        if out["applied"] != size or not out["sync"]["pulled"]:
            raise RuntimeError(f"the clone applied {out['applied']} of {size}")
        noop, out = runner.run(["sync", "--store", str(store), "--json"])
        if out["applied"] != 0 or out["sync"]["pulled"] or out["sync"]["pushed"]:
            raise RuntimeError(f"the no-op sync did something: {out['sync']}")
        read, out = runner.run(["status", "--store", str(store), "--json"])
        if run == 0:
            _check_clone(store, gen, segments)
        for step, m in zip(STEPS, (clone, noop, read), strict=True):
            result.runs[step].append(m)
        print(
            f"  {size}: run {run + 1}/{runs}: clone {clone.seconds:.2f} s, "
            f"no-op {noop.seconds:.2f} s, read {read.seconds:.2f} s",
            file=sys.stderr,
        )
        shutil.rmtree(store)
        shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(gen)
    return result


def render(results: list[SizeResult], runs: int) -> str:
    """The table: one row per size and step (median wall, peak RSS)."""
    lines = [
        f"| decisions | segments | what | median of {runs} | peak RSS | reference |",
        "|---:|---:|---|---:|---:|---|",
    ]
    for res in results:
        for step, label in STEPS.items():
            m = res.median(step)
            lines.append(
                f"| {res.size:,} | {WRITERS} × 1 ({res.segments_mib:.0f} MiB) | "
                f"{label} | {m.seconds:.2f} s | {m.rss_mib:.0f} MiB | "
                f"{REFERENCE.get(step, '')} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Start the server, measure every size, print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000,1000000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--work", type=Path, default=None, help="scratch directory")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    server = subprocess.Popen(
        [sys.executable, str(SERVER)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    scratch = Path(tempfile.mkdtemp(prefix="kgai-s3-bench-", dir=args.work))
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip()
        if not port.isdigit():
            raise RuntimeError("the S3 test server did not start")
        os.environ.update(
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
            AWS_ACCESS_KEY_ID="bench",
            AWS_SECRET_ACCESS_KEY="bench",
            AWS_CONFIG_FILE=str(scratch / "no-aws-config"),
            AWS_SHARED_CREDENTIALS_FILE=str(scratch / "no-aws-creds"),
            AWS_EC2_METADATA_DISABLED="true",
            KGAI_HOME=str(scratch / "kgai-home"),
        )
        for var in ("AWS_PROFILE", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "KGAI_STORE"):
            os.environ.pop(var, None)
        client = _client()
        client.create_bucket(Bucket=BUCKET)
        results = []
        for size in sizes:
            print(f"{size}: generating and uploading", file=sys.stderr)
            results.append(measure_size(scratch, client, size, args.runs))
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)
    load = os.getloadavg()
    if args.json:
        print(
            json.dumps(
                {
                    "load": load,
                    "sizes": [
                        {
                            "size": r.size,
                            "segments_mib": round(r.segments_mib, 1),
                            "upload_s": round(r.upload_s, 2),
                            **{
                                step: [[m.seconds, round(m.rss_mib)] for m in ms]
                                for step, ms in r.runs.items()
                            },
                        }
                        for r in results
                    ],
                },
                indent=1,
            )
        )
        return
    print(render(results, args.runs))
    print(f"\nload average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
