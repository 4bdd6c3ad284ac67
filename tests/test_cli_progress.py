"""Long work shows a progress line on a terminal, and nothing anywhere else
(issue 18, point 9).

The line waits ``KGAI_TUI_PROGRESS_DELAY`` seconds (0.5 by default; 0.02 here, so
a 20,000-decision store's cold open, a few tenths of a second, is long work: the
100,000 these tests once generated cost a minute of the suite); every test points
``KGAI_TUI_CACHE_DIR`` at its own empty directory so the open is cold.
The CLI runs as a real process with its stderr on a pseudo-terminal (or a pipe) and
its stdout in a file.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")

pytestmark = pytest.mark.slow

DECISIONS = 20_000


@dataclass
class Ran:
    """What a run left: its exit code, what reached stderr, and stdout."""

    code: int
    stderr: bytes
    stdout: bytes

    @property
    def shown(self) -> str:
        """The stderr bytes as text."""
        return self.stderr.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated store of 20,000 decisions over 4 shards."""
    store = tmp_path_factory.mktemp("big") / "store"
    generate = ["bench", "generate", str(store), "--decisions", str(DECISIONS)]
    subprocess.run(
        [KGAI_TUI, *generate, "--writers", "4"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return store


def environment(cache: Path, term: str = "xterm") -> dict[str, str]:
    """The test's environment with a cold cache of its own."""
    return {
        **os.environ,
        "KGAI_TUI_CACHE_DIR": str(cache),
        "TERM": term,
        "KGAI_TUI_PROGRESS_DELAY": "0.02",
    }


def drain(master: int, proc: subprocess.Popen[bytes], seconds: float) -> bytes:
    """What the terminal's other end receives until the process closes it (or
    exits, or ``seconds`` pass). Read as it comes: a full terminal buffer would
    block the spinner."""
    seen = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed it
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    return seen


def on_a_terminal(args: list[str], tmp_path: Path, term: str = "xterm") -> Ran:
    """Run ``kgai-tui ARGS`` with stderr on a 200-column pseudo-terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    out_path = tmp_path / "stdout"
    with out_path.open("wb") as out:
        proc = subprocess.Popen(
            [KGAI_TUI, *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=slave,
            env=environment(tmp_path / "cache", term),
        )
    os.close(slave)
    try:
        seen = drain(master, proc, 120)
        code = proc.wait(timeout=10)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return Ran(code, seen, out_path.read_bytes())


def piped(args: list[str], tmp_path: Path) -> Ran:
    """Run ``kgai-tui ARGS`` with stderr and stdout to pipes."""
    done = subprocess.run(
        [KGAI_TUI, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=environment(tmp_path / "cache"),
        timeout=120,
        check=False,
    )
    return Ran(done.returncode, done.stderr, done.stdout)


def test_a_cold_read_shows_progress_on_the_terminal(big: Path, tmp_path: Path) -> None:
    ran = on_a_terminal(["status", "--store", str(big), "--json"], tmp_path)
    assert ran.code == 0, ran.shown
    assert "kgai-tui: reading the log (4 shards, " in ran.shown
    assert "into the read model; later reads are quick" in ran.shown
    # Drawn in place and erased at the end: the terminal is left clean.
    assert ran.stderr.startswith(b"\r\x1b[2K")
    assert ran.stderr.endswith(b"\r\x1b[2K")
    assert b"\n" not in ran.stderr
    # stdout is the JSON answer and nothing else.
    assert json.loads(ran.stdout)["events"] == DECISIONS
    assert b"kgai-tui:" not in ran.stdout and b"\x1b" not in ran.stdout


def test_a_cold_replay_shows_progress_on_the_terminal(
    big: Path, tmp_path: Path
) -> None:
    ran = on_a_terminal(
        ["diff", "2026-01-01", "2026-01-02", "--store", str(big)], tmp_path
    )
    assert ran.code == 0, ran.shown
    assert "kgai-tui: reading the history of the log (4 shards, " in ran.shown
    assert b"kgai-tui:" not in ran.stdout and b"\x1b" not in ran.stdout
    # as-of reads the model first: its cold open says so.
    (tmp_path / "a").mkdir()
    ran = on_a_terminal(["as-of", "2026-01-01", "--store", str(big)], tmp_path / "a")
    assert ran.code == 0, ran.shown
    assert "kgai-tui: reading the log (4 shards, " in ran.shown
    assert b"reading the log" not in ran.stdout and b"\x1b" not in ran.stdout


def test_a_search_index_build_shows_progress(big: Path, tmp_path: Path) -> None:
    ran = on_a_terminal(["search", "decision", "--store", str(big), "--json"], tmp_path)
    assert ran.code == 0, ran.shown
    assert "kgai-tui: building the search index; later searches use it" in ran.shown
    assert json.loads(ran.stdout)["ok"] is True
    assert b"\x1b" not in ran.stdout


def test_a_piped_stderr_gets_no_progress(big: Path, tmp_path: Path) -> None:
    ran = piped(["status", "--store", str(big), "--json"], tmp_path)
    assert ran.code == 0, ran.shown
    assert ran.stderr == b""
    assert json.loads(ran.stdout)["events"] == DECISIONS
    searched = piped(["search", "decision", "--store", str(big)], tmp_path)
    assert searched.code == 0, searched.shown
    assert searched.stderr == b""


def test_a_dumb_terminal_gets_no_progress(big: Path, tmp_path: Path) -> None:
    ran = on_a_terminal(
        ["status", "--store", str(big), "--text"], tmp_path, term="dumb"
    )
    assert ran.code == 0, ran.shown
    assert ran.stderr == b""
    assert f"events: {DECISIONS}".encode() in ran.stdout


def test_a_write_waiting_for_the_model_lock_says_so(tmp_path: Path) -> None:
    """A ``record`` that must wait for another process's model update (the
    detached writer after a first read) shows why on the terminal, then records
    once the lock is free; with stderr piped it waits in silence, as every
    progress line does."""
    from kgai_tui.core.model.schema import model_path
    from kgai_tui.demo import DEMO_STORE

    store = tmp_path / "store"
    shutil.copytree(DEMO_STORE, store)
    cache = tmp_path / "cache"
    env = environment(cache)
    for args in (["init"], ["status", "--json"]):
        subprocess.run(
            [KGAI_TUI, *args, "--store", str(store)],
            env=env,
            check=True,
            capture_output=True,
            timeout=60,
        )
    doc = tmp_path / "d.json"
    lock = model_path(store.resolve(), cache).with_suffix(".sqlite.lock")
    assert lock.exists()

    def record(title: str, stderr: int) -> tuple[subprocess.Popen[bytes], Path]:
        doc.write_text(json.dumps({"decision": {"title": title, "mutations": []}}))
        out = tmp_path / f"{title}.out"
        with out.open("wb") as fh:
            proc = subprocess.Popen(
                [KGAI_TUI, "record", str(doc), "--store", str(store), "--json"],
                stdin=subprocess.DEVNULL,
                stdout=fh,
                stderr=stderr,
                env=env,
            )
        return proc, out

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    held = os.open(lock, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    seen = b""
    try:
        proc, out = record("Waited for the model", slave)
        os.close(slave)
        deadline = time.monotonic() + 30
        while b"waiting for another" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                seen += os.read(master, 65536)
        assert proc.poll() is None, "the write did not wait for the lock"
    finally:
        os.close(held)  # the lock is free: the write goes on
    try:
        seen += drain(master, proc, 60)
        assert proc.wait(timeout=60) == 0, seen
    finally:
        os.close(master)
    shown = seen.decode("utf-8", "replace")
    assert "kgai-tui: waiting for another kgai-tui process to finish writing" in shown
    assert seen.endswith(b"\r\x1b[2K")  # erased once the wait ended
    answer = json.loads(out.read_bytes())
    assert answer["ok"] is True
    assert [d["title"] for d in answer["decisions"]] == ["Waited for the model"]

    # Piped: the same wait, nothing on stderr.
    held = os.open(lock, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        piped_proc, _ = record("Waited quietly", subprocess.PIPE)
        time.sleep(1.5)
        assert piped_proc.poll() is None
    finally:
        os.close(held)
    _, err = piped_proc.communicate(timeout=60)
    assert piped_proc.returncode == 0 and err == b""


@pytest.mark.parametrize(
    ("raw", "delay"),
    [(None, 0.5), ("0", 0.0), ("2.5", 2.5), ("-1", 0.5), ("61", 0.5), ("soon", 0.5)],
)
def test_the_delay_is_half_a_second_unless_set_within_bounds(
    raw: str | None, delay: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgai_tui.cli.support import progress_delay

    if raw is None:
        monkeypatch.delenv("KGAI_TUI_PROGRESS_DELAY", raising=False)
    else:
        monkeypatch.setenv("KGAI_TUI_PROGRESS_DELAY", raw)
    assert progress_delay() == delay
