"""Helpers of the S3 sync tests: the bucket as another client sees it, the CLI, stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
from builders import as_person

from kgai_tui.core.store.shards import read_shard
from kgai_tui.core.write.writes import init_store, record

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")


def s3() -> Any:
    """A boto3 client for the test server (the environment says where)."""
    return boto3.client("s3", region_name="us-east-1")


def keys(bucket: str) -> list[str]:
    """Every key in ``bucket``, sorted."""
    pages = s3().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return sorted(o["Key"] for p in pages for o in p.get("Contents", ()))


def get(bucket: str, key: str) -> bytes:
    """One object's bytes."""
    return bytes(s3().get_object(Bucket=bucket, Key=key)["Body"].read())


def put(bucket: str, key: str, body: bytes) -> None:
    """Write an object as some other client would (no condition)."""
    s3().put_object(Bucket=bucket, Key=key, Body=body)


def cli(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real console script."""
    return subprocess.run(
        [KGAI_TUI, *as_person(args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def ok_json(*args: str) -> Any:
    """Run a command with ``--json`` that must succeed; return the parsed output."""
    done = cli(*args, "--json")
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def make_store(root: Path, actor: str) -> Path:
    """A new store (in-process ``init``)."""
    init_store(root, actor=actor)
    return root


def decide(
    store: Path, title: str, kind: str = "feature", name: str = "Invoice"
) -> str:
    """Record one decision on ``kind:name`` in-process; return its id."""
    doc = {
        "decision": {
            "title": title,
            "rationale": f"{title} (why)",
            "mutations": [{"op": "upsert_element", "kind": kind, "name": name}],
        }
    }
    return str(record(store, json.dumps(doc))["decisions"][0]["id"])


def event_hashes(store: Path) -> set[str]:
    """The hashes of every event in every shard of ``store``."""
    out: set[str] = set()
    for shard in sorted((store / "log").glob("*.ndjson")):
        out |= {e.decoded.event.hash for e in read_shard(shard).events}
    return out
