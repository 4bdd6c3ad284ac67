"""Issue 15 point 6: a signal stops ``record`` with its batch whole or absent.

A real ``kgai-tui record`` of 600 decisions is signalled at several moments: while
it holds the lock before writing, the moment its shard starts to grow, and a few
milliseconds into the batch. Whatever the moment, the shard then holds all of the
batch or none of it, doctor is healthy, the lock is free, the exit code is
``128 + signal`` (or 0 when the batch was already done) and stderr is one line
without a traceback. SIGINT, SIGTERM and SIGHUP behave the same.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kgai_tui.core.write.writes import init_store, record

CLI = [sys.executable, "-m", "kgai_tui"]
BATCH = 600


def _document(tag: str) -> str:
    """600 decisions of ~2 KB each: a batch that takes a noticeable time to append."""
    return json.dumps(
        {
            "decisions": [
                {
                    "title": f"{tag}-{k}",
                    "rationale": "r" * 2000,
                    "mutations": [
                        {
                            "op": "set_prop",
                            "element": "feature:X",
                            "key": "n",
                            "value": k,
                        }
                    ],
                }
                for k in range(BATCH)
            ]
        }
    )


def _lock_is_held(root: Path) -> bool:
    fd = os.open(root / ".kg.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _default_signals() -> None:
    """The child starts with default dispositions, whatever the test runner ignores."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, Path]:
    """A store with one decision, and the path of its shard."""
    root = tmp_path / "store"
    init_store(root, actor="sig")
    record(root, json.dumps({"decision": {"title": "base"}}))
    (shard,) = (root / "log").glob("*.ndjson")
    return root, shard


def _run_and_signal(
    root: Path, shard: Path, doc: Path, sig: signal.Signals, moment: str, delay: float
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Start ``record DOC`` and send ``sig`` at ``moment`` (+ ``delay`` seconds).

    Returns:
        The finished process and the shard size observed when the signal was sent.
    """
    start = shard.stat().st_size
    proc = subprocess.Popen(
        [*CLI, "record", "--store", str(root), str(doc)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_signals,
    )
    deadline = time.monotonic() + 30
    if moment == "locked":  # it holds the lock and replays: nothing is written yet
        while not _lock_is_held(root) and time.monotonic() < deadline:
            time.sleep(0.001)
    else:  # the batch has begun: its first line is on disk
        while shard.stat().st_size <= start and time.monotonic() < deadline:
            pass
    if delay:
        time.sleep(delay)
    seen = shard.stat().st_size
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), seen


def _assert_whole_or_absent(
    root: Path,
    shard: Path,
    before: bytes,
    tag: str,
    done: subprocess.CompletedProcess[str],
) -> int:
    """The batch is all there or not at all; everything else holds. Returns its count."""
    data = shard.read_bytes()
    assert data.startswith(before), "bytes before the batch changed"
    assert data.endswith(b"\n")
    count = sum(
        1 for line in data[len(before) :].splitlines() if f'"{tag}-' in line.decode()
    )
    assert count in (0, BATCH), f"{count} of {BATCH} decisions left behind"
    assert len(data[len(before) :].splitlines()) == count
    assert "Traceback" not in done.stderr, done.stderr
    assert not _lock_is_held(root), "the lock is still held"
    assert not list((root / "log").glob("*.torn-*")), "a signal is not a crash"
    doctor = subprocess.run(
        [*CLI, "doctor", "--store", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert doctor.returncode == 0 and json.loads(doctor.stdout)["ok"], doctor.stdout
    return count


CASES = [
    (signal.SIGTERM, "growing", 0.0),
    (signal.SIGTERM, "growing", 0.0),
    (signal.SIGTERM, "growing", 0.02),
    (signal.SIGTERM, "growing", 0.1),
    (signal.SIGTERM, "locked", 0.0),
    (signal.SIGINT, "growing", 0.0),
    (signal.SIGINT, "growing", 0.05),
    (signal.SIGHUP, "growing", 0.0),
    (signal.SIGHUP, "locked", 0.0),
]


def test_a_signal_leaves_the_batch_whole_or_absent(
    store: tuple[Path, Path], tmp_path: Path
) -> None:
    """Signals mid-batch roll it back (or let it finish), never leave part of it."""
    root, shard = store
    mid_batch: dict[str, int] = {}
    for i, (sig, moment, delay) in enumerate(CASES):
        tag = f"round{i}"
        doc = tmp_path / f"{tag}.json"
        doc.write_text(_document(tag))
        before = shard.read_bytes()
        done, seen = _run_and_signal(root, shard, doc, sig, moment, delay)
        count = _assert_whole_or_absent(root, shard, before, tag, done)
        context = (sig.name, moment, delay, done.returncode, done.stderr)
        if done.returncode == 0:  # the batch was done before the signal arrived
            assert count == BATCH, context
            continue
        assert done.returncode == 128 + sig, context
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("kgai-tui: interrupted by "), (
            context
        )
        assert sig.name in lines[0], context
        if "nothing was written" in lines[0]:
            assert count == 0, context
        else:
            assert count == BATCH, context
        if count == 0 and seen > len(before):
            mid_batch[sig.name] = mid_batch.get(sig.name, 0) + 1
    # The test is only worth something if signals really landed inside a batch.
    assert mid_batch.get("SIGTERM", 0) >= 2, mid_batch
    assert mid_batch.get("SIGINT", 0) >= 1, mid_batch


def _sender(proc: subprocess.Popen[bytes]) -> Callable[[dict[str, object]], None]:
    """Write one JSON-RPC message per line to the server's stdin."""

    def send(message: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    return send


def test_sigterm_to_the_mcp_server_mid_batch_leaves_it_whole_or_absent(
    store: tuple[Path, Path],
) -> None:
    """The server's write tool runs on a worker thread: SIGTERM waits for the batch."""
    root, shard = store
    for rnd in range(2):
        proc = subprocess.Popen(
            [*CLI, "mcp", "--store", str(root), "--allow-write"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_default_signals,
        )
        assert proc.stdin is not None and proc.stdout is not None
        send = _sender(proc)
        send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert b'"id":0' in proc.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tag = f"mcp{rnd}"
        before = shard.read_bytes()
        arguments = json.loads(_document(tag))
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "record", "arguments": arguments},
            }
        )
        deadline = time.monotonic() + 30
        while shard.stat().st_size <= len(before) and time.monotonic() < deadline:
            pass
        time.sleep(0.01 * rnd)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGTERM, (proc.returncode, err)
        data = shard.read_bytes()
        assert data.startswith(before) and data.endswith(b"\n")
        count = data.count(f'"{tag}-'.encode())
        assert count in (0, BATCH), f"{count} of {BATCH} decisions left behind"
        assert b"Traceback" not in err, err
        assert not _lock_is_held(root)
