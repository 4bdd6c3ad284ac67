"""Special files in ``log/`` and in the cache: no read hangs, grows or fails on them.

Issue 15, point 3. A Linux directory can hold regular files, FIFOs, sockets, device
nodes, directories and symbolic links to any of them (or to themselves). Every read
(``status``, ``heads``, ``history``, ``doctor``, ``search``, ``context``, ``as-of``)
runs here as a real process under a timeout and an address-space limit, over a store
whose ``log/`` holds one of each beside the demo store's regular shards. Each must
answer from the regular shards exactly as it does without the intruders, exit with
its documented code, print no traceback, and ``doctor`` must name every intruder.
The MCP server's ``status`` must answer too. Cache files replaced by a FIFO or a
symbolic link to ``/dev/zero`` are misses: the reads still answer correctly.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from kgai_tui.core.store.cache_file import store_cache_dir
from kgai_tui.demo import DEMO_STORE

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")
NOW = "2026-06-01T12:00:00Z"
TIMEOUT = 60
# Enough for any read of the demo store; /dev/zero read whole passes it in seconds.
ADDRESS_SPACE = 3 * 1024**3
PAYMENTS = "el_7afad531e3f0096a1da2"  # contested in the demo store
READS: dict[str, list[str]] = {
    "status": ["status"],
    "heads": ["heads"],
    "history": ["history", PAYMENTS],
    "doctor": ["doctor"],
    "search": ["search", "payments"],
    "context": ["context", "--about", "payments"],
    "as-of": ["as-of", "2026-03-01"],
}


def passed_through() -> dict[str, str]:
    """``PYTHONPATH`` for the MCP server too (the SDK gives it a minimal env)."""
    return {k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}


def _limited() -> None:
    """Run the child under an address-space limit (a runaway read fails fast)."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The real console script, bounded in time and memory."""
    return subprocess.run(
        [KGAI_TUI, *args],
        capture_output=True,
        env={**os.environ, "KGAI_TUI_NOW": NOW, **(env or {})},
        timeout=TIMEOUT,
        preexec_fn=_limited,
        check=False,
    )


@contextlib.contextmanager
def bound_socket(path: Path) -> Iterator[None]:
    """A real AF_UNIX socket file at ``path`` (bound, never listening)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        yield
    finally:
        sock.close()


def _make_fifo(path: Path) -> None:
    os.mkfifo(path)


def _make_char_device(path: Path) -> bool:
    """``/dev/null``'s device node at ``path``; False when this user cannot mknod."""
    try:
        os.mknod(path, 0o644 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        return False
    return True


def plant_intruders(log: Path, stack: contextlib.ExitStack) -> list[str]:
    """One of every non-regular kind in ``log/``; returns their names."""
    names: list[str] = []
    hidden = log.parent / "elsewhere"
    hidden.mkdir()

    def add(name: str, make: Callable[[Path], object]) -> None:
        make(log / name)
        names.append(name)

    add("fifo.ndjson", _make_fifo)
    stack.enter_context(bound_socket(log / "socket.ndjson"))
    names.append("socket.ndjson")
    if _make_char_device(hidden / "null"):
        add("chardev.ndjson", lambda p: _make_char_device(p))
        add("to-chardev.ndjson", lambda p: p.symlink_to(hidden / "null"))
    add("dir.ndjson", lambda p: p.mkdir())
    add("zero.ndjson", lambda p: p.symlink_to("/dev/zero"))
    add("devnull.ndjson", lambda p: p.symlink_to("/dev/null"))
    _make_fifo(hidden / "fifo")
    add("to-fifo.ndjson", lambda p: p.symlink_to(hidden / "fifo"))
    stack.enter_context(bound_socket(hidden / "sock"))
    add("to-socket.ndjson", lambda p: p.symlink_to(hidden / "sock"))
    add("loop.ndjson", lambda p: p.symlink_to(p.name))
    add("dangling.ndjson", lambda p: p.symlink_to(hidden / "missing"))
    add("to-dir.ndjson", lambda p: p.symlink_to(hidden))
    # A symbolic link to a regular file holding valid events is not read either:
    # where its bytes live is not the store's to decide (docs/determinism.md).
    shutil.copy(DEMO_STORE / "log" / "i5a1c0ffee0000a11.ndjson", hidden / "copy")
    add("to-regular.ndjson", lambda p: p.symlink_to(hidden / "copy"))
    return names


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A private copy of the demo store (4 regular shards)."""
    target = tmp_path / "store"
    shutil.copytree(DEMO_STORE, target)
    return target


def _answers(
    root: Path, env: dict[str, str], reads: dict[str, list[str]] = READS
) -> dict[str, subprocess.CompletedProcess[bytes]]:
    return {
        name: run(*argv, "--store", str(root), "--json", env=env)
        for name, argv in reads.items()
    }


def test_every_read_answers_from_the_regular_shards(
    store: Path, tmp_path: Path
) -> None:
    """FIFOs, sockets, devices, directories and links: skipped, named, never followed."""
    clean_env = {"KGAI_TUI_CACHE_DIR": str(tmp_path / "cache-clean")}
    expected = _answers(store, clean_env)
    for name, done in expected.items():
        assert done.returncode == 0, (name, done.stderr)
    clean_doctor = json.loads(expected["doctor"].stdout)
    with contextlib.ExitStack() as stack:
        names = plant_intruders(store / "log", stack)
        for cache in ("cache-new", "cache-new"):  # cold, then warm
            env = {"KGAI_TUI_CACHE_DIR": str(tmp_path / cache)}
            got = _answers(store, env)
            for read, done in got.items():
                assert b"Traceback" not in done.stderr, (read, done.stderr)
                want_code = 1 if read == "doctor" else 0  # doctor: problems found
                assert done.returncode == want_code, (read, done.stderr)
                if read == "doctor":
                    continue
                if read == "status":
                    obj = json.loads(done.stdout)
                    want = json.loads(expected[read].stdout)
                    assert obj.pop("skipped_lines") == want.pop("skipped_lines") + len(
                        names
                    )
                    assert obj == want
                    continue
                assert done.stdout == expected[read].stdout, read
            doctor = json.loads(got["doctor"].stdout)
            problems = doctor["problems"]
            for key in ("events", "elements", "decisions", "conflicts"):
                assert doctor[key] == clean_doctor[key], key
            extra = [p for p in problems if p not in (clean_doctor["problems"] or [])]
            assert len(extra) == len(names), extra
            for name in names:
                assert sum(f"log/{name}:" in p for p in extra) == 1, (name, extra)


def test_the_mcp_server_answers_status(store: Path, tmp_path: Path) -> None:
    """The long-running reader polls the shards on every call: no FIFO may hang it."""
    env = {
        "HOME": os.environ["HOME"],
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "KGAI_TUI_NOW": NOW,
        **passed_through(),
    }
    with contextlib.ExitStack() as stack:
        plant_intruders(store / "log", stack)
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "kgai_tui", "mcp", "--store", str(store)],
            env=env,
        )

        async def main() -> bytes:
            async with Client(params, read_timeout_seconds=TIMEOUT) as client:
                with anyio.fail_after(TIMEOUT):
                    result = await client.call_tool("status", {})
                    again = await client.call_tool("status", {})
            assert not result.is_error
            block, second = result.content[0], again.content[0]
            assert isinstance(block, TextContent)
            assert isinstance(second, TextContent)
            assert block.text == second.text
            return block.text.encode()

        text = anyio.run(main)
        cli = run("status", "--store", str(store), "--json")
    assert text == cli.stdout
    assert json.loads(text)["decisions"] == 65


def _wait_for(path: Path) -> None:
    """The CLI writes its caches from a detached child after it answered."""
    deadline = time.monotonic() + TIMEOUT
    while not path.is_file():
        assert time.monotonic() < deadline, f"{path} was never written"
        time.sleep(0.05)
    time.sleep(0.2)  # the rename is the last step; give the writer time to exit


def _cache_files(cache: Path) -> list[Path]:
    """The time index, its seal and the search index's state file."""
    return sorted(
        [
            *cache.glob("*/engine*.bin"),
            *cache.glob("*/engine*.bin.seal"),
            *cache.glob("*/search/state.json"),
        ]
    )


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_special_cache_file_is_a_miss(store: Path, tmp_path: Path, kind: str) -> None:
    """Time index and search state replaced: the answers stay right (``diff``
    reads the time index the model's detached build saved)."""
    cache = tmp_path / "cache"
    env = {"KGAI_TUI_CACHE_DIR": str(cache), "XDG_CACHE_HOME": str(cache / "xdg")}
    reads = {**READS, "diff": ["diff", "2026-01-01", "2026-03-01"]}
    expected = _answers(store, env, reads)
    _wait_for(store_cache_dir(store, cache) / "engine.time.bin")
    _wait_for(store_cache_dir(store, cache) / "search" / "state.json")
    files = _cache_files(cache)
    names = {p.name for p in files}
    assert any(n.endswith(".time.bin") for n in names), names
    assert any(n.endswith(".time.bin.seal") for n in names), names
    assert "state.json" in names, names
    for path in files:
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
    got = _answers(store, env, reads)
    for read, done in got.items():
        assert b"Traceback" not in done.stderr, (read, done.stderr)
        assert done.returncode == expected[read].returncode, (read, done.stderr)
        assert done.stdout == expected[read].stdout, read


def test_a_store_whose_settings_file_is_a_fifo(store: Path, tmp_path: Path) -> None:
    """``kg.config.json`` replaced by a FIFO: reads answer (as without a settings
    file), ``doctor`` names it, a write refuses in one line and writes nothing.
    Before, every command waited for ever on the first ``open``."""
    env = {"KGAI_TUI_CACHE_DIR": str(tmp_path / "cache")}
    config = store / "kg.config.json"
    config.unlink()
    os.mkfifo(config)
    done = run("status", "--store", str(store), "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["events"] > 0
    doctor = run("doctor", "--store", str(store), "--text", env=env)
    assert doctor.returncode == 1
    assert b"kg.config.json: it is a FIFO" in doctor.stdout + doctor.stderr
    shards = {p.name: p.read_bytes() for p in (store / "log").iterdir()}
    doc = tmp_path / "decision.json"
    doc.write_text(json.dumps({"decision": {"title": "t", "mutations": []}}))
    write = run("record", str(doc), "--store", str(store), env=env)
    assert write.returncode != 0
    lines = write.stderr.decode().strip().splitlines()
    assert lines == [f"kgai-tui: cannot read {config}: it is a FIFO"], lines
    assert {p.name: p.read_bytes() for p in (store / "log").iterdir()} == shards
