"""A same-size edit in the middle of a shard is never served from a warm cache.

Issue 15, point 4. After a warm run, one line more than 64 KiB before the shard's end
(and after its first 64 KiB) is rewritten in place with the same length, keeping the
inode, the size and the modification time (``os.utime`` with nanoseconds): what
``sed -i`` does to the content, minus its new inode. ``doctor`` must report the bad
content hash (it verifies every byte and never trusts a cache), and warm reads (the
CLI, and an MCP server that answered before the edit) must answer exactly as a read
with a fresh cache does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from builders import ShardWriter, decision, upsert, write_store
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")
NOW = "2026-06-01T12:00:00Z"
TIMEOUT = 120
COUNT = 1200  # about 330 KiB in the big shard
EDITED = COUNT // 2
READS: dict[str, list[str]] = {
    "status": ["status"],
    "heads": ["heads"],
    "history": ["history", f"service:svc{EDITED:04d}"],
    "search": ["search", f"svc{EDITED:04d}"],
    "as-of": ["as-of", "2026-12-31"],
}


def build(root: Path) -> Path:
    """One big shard of independent decisions and one small shard."""
    big = ShardWriter("ib16000000000000a", "alice")
    for i in range(COUNT):
        big.add(
            decision(f"decision {i:04d}", [upsert("service", f"svc{i:04d}")]),
            lamport=i + 1,
            recorded_at=f"2026-02-{1 + i % 28:02d}T10:00:00Z",
        )
    small = ShardWriter("i5ea11000000000b", "bob")
    small.add(
        decision("small one", [upsert("service", "tiny")], author="bob"),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    return write_store(
        root,
        {
            "ib16000000000000a.ndjson": big.to_bytes(),
            "i5ea11000000000b.ndjson": small.to_bytes(),
        },
    )


def run(*args: str, cache: Path) -> subprocess.CompletedProcess[bytes]:
    """The real console script with its caches under ``cache``."""
    return subprocess.run(
        [KGAI_TUI, *args],
        capture_output=True,
        env={
            **os.environ,
            "KGAI_TUI_NOW": NOW,
            "KGAI_TUI_CACHE_DIR": str(cache),
            "XDG_CACHE_HOME": str(cache / "xdg"),
        },
        timeout=TIMEOUT,
        check=False,
    )


def answers(root: Path, cache: Path) -> dict[str, tuple[int, bytes]]:
    """Exit code and ``--json`` stdout of every read."""
    out = {}
    for name, argv in READS.items():
        done = run(*argv, "--store", str(root), "--json", cache=cache)
        assert b"Traceback" not in done.stderr, (name, done.stderr)
        out[name] = (done.returncode, done.stdout)
    return out


def wait_for_cache(cache: Path) -> None:
    """The CLI writes the read model and its history (the time index) from a
    detached child after it answered."""
    deadline = time.monotonic() + TIMEOUT
    while not (
        list(cache.glob("*/model.sqlite.seal"))
        and list(cache.glob("*/engine.time.bin"))
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)


def edit_in_place(shard: Path) -> None:
    """Rewrite one title mid-file: same size, same inode, same mtime (ns)."""
    st = os.stat(shard)
    data = shard.read_bytes()
    old = f'"title":"decision {EDITED:04d}"'.encode()
    at = data.index(old)
    assert at > 64 * 1024 and len(data) - at > 64 * 1024, (at, len(data))
    with open(shard, "r+b") as fh:
        fh.seek(at)
        fh.write(old.replace(b"decision", b"decisioN"))
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(shard)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
    )


def test_doctor_and_warm_reads_see_a_same_size_edit(tmp_path: Path) -> None:
    root = build(tmp_path / "store")
    cache = tmp_path / "cache"
    doctor = run("doctor", "--store", str(root), "--json", cache=cache)
    assert doctor.returncode == 0, doctor.stdout
    before = answers(root, cache)
    assert all(code == 0 for code, _ in before.values()), before
    wait_for_cache(cache)
    assert answers(root, cache) == before  # warm
    edit_in_place(root / "log" / "ib16000000000000a.ndjson")

    doctor = run("doctor", "--store", str(root), "--json", cache=cache)
    assert doctor.returncode == 1, doctor.stdout
    problems = json.loads(doctor.stdout)["problems"]
    assert any("bad content hash" in p for p in problems), problems

    fresh = answers(root, tmp_path / "fresh-cache")
    assert fresh["status"] != before["status"]
    assert answers(root, cache) == fresh


def test_a_running_mcp_server_sees_a_same_size_edit(tmp_path: Path) -> None:
    root = build(tmp_path / "store")
    cache = tmp_path / "cache"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kgai_tui", "mcp", "--store", str(root)],
        env={
            "HOME": os.environ["HOME"],
            "XDG_CACHE_HOME": str(cache / "xdg"),
            "KGAI_TUI_CACHE_DIR": str(cache),
            "KGAI_TUI_NOW": NOW,
            **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
        },
    )

    async def status(client: Client) -> bytes:
        result = await client.call_tool("status", {})
        block = result.content[0]
        assert isinstance(block, TextContent)
        return block.text.encode()

    async def main() -> tuple[bytes, bytes]:
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            before = await status(client)
            await status(client)
            edit_in_place(root / "log" / "ib16000000000000a.ndjson")
            return before, await status(client)

    before, after = anyio.run(main)
    fresh = run("status", "--store", str(root), "--json", cache=tmp_path / "fresh")
    assert after != before
    assert after == fresh.stdout
