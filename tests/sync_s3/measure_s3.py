"""Measure the S3 transport against the test server (the numbers in docs/sync.md).

Run: ``.venv/bin/python tests/sync_s3/measure_s3.py [TOTAL]`` (default 100000
events from 30 writers, the reference generator's defaults). Prints one JSON
object: boto3's import and client cost, small-object put/get/list rates, and a
cold clone (every segment of a team pulled into a fresh store) and a push.
Loopback only; everything it starts it stops.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE)]


def _python_ms(code: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000)


def main() -> None:
    """Start the server, measure, print JSON."""
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    out: dict[str, Any] = {}
    out["python_start_ms"] = _python_ms("pass")
    out["import_boto3_ms"] = _python_ms("import boto3") - out["python_start_ms"]
    out["import_boto3_and_client_ms"] = (
        _python_ms("import boto3; boto3.client('s3', region_name='us-east-1')")
        - out["python_start_ms"]
    )
    server = subprocess.Popen(
        [sys.executable, str(HERE / "s3_server.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        os.environ.update(
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{server.stdout.readline().strip()}",
            AWS_ACCESS_KEY_ID="measure",
            AWS_SECRET_ACCESS_KEY="measure",
            KGAI_HOME=tempfile.mkdtemp(),
        )
        with tempfile.TemporaryDirectory() as tmp:
            out.update(_measure(Path(tmp), total))
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(json.dumps(out, indent=2))


def _measure(tmp: Path, total: int) -> dict[str, Any]:
    from benchmarks.genlog import GenParams, write_segments, write_store
    from kgai_tui.core.write.writes import init_store
    from kgai_tui.sync.s3_client import fetch_in_order, open_bucket
    from kgai_tui.sync.s3_protocol import parse_s3_url
    from kgai_tui.sync.s3_sync import s3_sync_store

    res: dict[str, Any] = {}
    url = parse_s3_url("s3://measure/team")
    import boto3

    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="measure")
    bucket = open_bucket(url)
    body = b"x" * 1024
    n = 300
    start = time.perf_counter()
    for i in range(n):
        bucket.put_new(f"small/{i:06d}", body)
    res["put_1KiB_per_s"] = round(n / (time.perf_counter() - start))
    small = [f"small/{i:06d}" for i in range(n)]
    start = time.perf_counter()
    for key in small:
        bucket.get(key)
    res["get_1KiB_per_s"] = round(n / (time.perf_counter() - start))
    start = time.perf_counter()
    list(fetch_in_order(bucket.get, small))
    res["get_1KiB_8_parallel_per_s"] = round(n / (time.perf_counter() - start))
    start = time.perf_counter()
    listed = bucket.list_keys("small/")
    res["list_300_keys_ms"] = round((time.perf_counter() - start) * 1000)
    assert len(listed) == n

    params = GenParams(total=total, installs=30, elems=max(100, total // 10))
    segments = write_segments(tmp / "gen", params)
    size = sum(p.stat().st_size for p in segments)
    start = time.perf_counter()
    for path in segments:
        rel = path.relative_to(tmp / "gen").as_posix()
        bucket.put_new(f"team/{rel}", path.read_bytes())
    res["upload_team_MiB"] = round(size / 2**20, 1)
    res["upload_MiB_per_s"] = round(size / 2**20 / (time.perf_counter() - start), 1)

    fresh = tmp / "fresh"
    init_store(fresh, actor="measure")
    start = time.perf_counter()
    report = s3_sync_store(fresh, "s3://measure/team")
    res[f"cold_clone_{total}_events_s"] = round(time.perf_counter() - start, 2)
    res["cold_clone_applied"] = report.applied
    start = time.perf_counter()
    s3_sync_store(fresh)
    res["in_step_sync_s"] = round(time.perf_counter() - start, 2)

    own = tmp / "own"
    init_store(own, actor="measure")
    write_store(tmp / "one", GenParams(total=total // 10, installs=1, elems=100))
    shard = next((tmp / "one" / "log").iterdir())
    from dataclasses import replace

    from kgai_tui.core.store.config_file import load_config, save_config

    cfg = load_config(own)
    assert cfg is not None
    save_config(own, replace(cfg, install_id=shard.stem))
    shard.rename(own / "log" / shard.name)
    start = time.perf_counter()
    pushed = s3_sync_store(own, "s3://measure/mine")
    res[f"push_{total // 10}_events_s"] = round(time.perf_counter() - start, 2)
    assert pushed.outcome.pushed
    return res


if __name__ == "__main__":
    main()
