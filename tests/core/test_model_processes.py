"""The read model under real processes: a writer and a reader at once, and SIGKILL.

Everything here runs in separate Python processes on real files (no mocks):

* a writer process records 500 decisions through ``record()`` (in batches of one to
  four, plus now and then a teammate's conflicting line in a second shard) while a
  reader process opens the model in a loop and writes down every answer it got;
  each distinct answer must be the answer of a fresh replay of one prefix of the
  shards, and the model the writer leaves must equal a fresh replay;
* a child process bringing the model up to date (extending it in place, or
  rebuilding it) is killed with SIGKILL after a seeded random delay, 20 times; the
  next ``open_model`` must answer exactly what a fresh replay answers, whatever the
  kill left behind (a half-written write-ahead log, a stale seal, a temporary file);
* the pool workers a rebuild forks, orphaned by a SIGKILL, must not keep the
  model's lock (they would block every later update for ever).
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

from builders import ShardWriter, decision, link, set_prop, upsert
from test_model import assert_same
from test_replay_properties import lines

from kgai_tui.core.engine.cold_open import PARALLEL_MIN_BYTES
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import NotFoundError
from kgai_tui.core.model.moments_write import engine_prints
from kgai_tui.core.model.open import open_model
from kgai_tui.core.model.schema import model_path
from kgai_tui.core.model.seal import sealed
from kgai_tui.core.reads.health import status_obj
from kgai_tui.core.reads.kg import conflicts_obj, heads_obj, history_obj
from kgai_tui.core.wire.model import Event
from kgai_tui.core.write.writes import init_store

TESTS = Path(__file__).resolve().parent.parent
CORE = Path(__file__).resolve().parent
PYTHON = sys.executable
#: A child's preamble: the test helpers importable, as under pytest.
PREAMBLE = f"import sys; sys.path[:0] = [{str(TESTS)!r}, {str(CORE)!r}]\n"

# ----------------------------------------------------------------- shared reads

#: Elements whose history and heads the reader asks for (some exist only later).
QUERIED = ("feature:F0", "feature:F1", "feature:F3", "service:S0", "feature:F9")
TEAMMATE = "i-teammate"
#: One reader's answer as it wrote it down: ``how``, ``shards`` (events per shard),
#: ``sizes`` (bytes read per shard), ``answer`` and ``as_of``.
Row = dict[str, Any]


def answer_of(engine: Any) -> str:
    """What a reader observes of a store, as JSON: status, heads, conflicts and the
    history and heads of a few elements (an error's text when there is none yet)."""
    p = engine.projection
    out: dict[str, Any] = {
        "status": {k: v for k, v in status_obj(engine).items() if k != "root"},
        "heads": heads_obj(p),
        "conflicts": conflicts_obj(p),
    }
    for token in QUERIED:
        for name, read in (("history", history_obj), ("heads", heads_obj)):
            try:
                out[f"{name} {token}"] = read(p, token)
            except NotFoundError as exc:
                out[f"{name} {token}"] = {"error": str(exc)}
    return json.dumps(out, sort_keys=True, ensure_ascii=False)


def run_child(code: str, *args: str, **kw: Any) -> subprocess.Popen[bytes]:
    """Start ``python -c PREAMBLE+code args...`` (output piped unless told)."""
    kw = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kw}
    return subprocess.Popen(
        [PYTHON, "-c", PREAMBLE + textwrap.dedent(code), *args], **kw
    )


def finished(proc: subprocess.Popen[bytes], what: str, timeout: float) -> str:
    """Wait for a child that must succeed; its stdout, or a failure naming it."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        out, err = proc.communicate()
        message = f"{what} did not finish in {timeout} s:\n{err.decode()}"
        raise AssertionError(message) from exc
    assert proc.returncode == 0, f"{what} exited {proc.returncode}:\n{err.decode()}"
    assert b"Traceback" not in err, f"{what} printed a traceback:\n{err.decode()}"
    return out.decode()


# ------------------------------------------------- a writer and a reader at once

WRITER = """
import json, random, sys
from pathlib import Path
from builders import ShardWriter, decision, upsert
from kgai_tui.core.wire.codec import marshal_event
from kgai_tui.core.write.lock import store_lock
from kgai_tui.core.write.writes import record

root, total, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
answers = Path(sys.argv[5]) if len(sys.argv) > 5 else None
rnd = random.Random(seed)


def await_as_of(lines: int) -> None:
    # Wait (a bounded while) for the reader to answer as-of at this prefix, so the
    # test sees several as-of prefixes however loaded the machine is.
    import time
    deadline = time.monotonic() + 60
    while answers is not None and time.monotonic() < deadline:
        text = answers.read_text("utf-8") if answers.exists() else ""
        for row in text.splitlines(keepends=True):
            if not row.endswith("\\n"):
                break  # the reader is still writing this line
            got = json.loads(row)
            if got["as_of"] is not None and sum(got["shards"].values()) == lines:
                return
        time.sleep(0.02)


mate = ShardWriter(sys.argv[4], actor="bob")
n = lamport = 0
calls = 0
while n < total:
    batch = []
    for _ in range(min(rnd.randint(1, 4), total - n)):
        k = rnd.randrange(10)
        muts = [{"op": "upsert_element", "kind": "feature", "name": f"F{k}",
                 "props": {"tier": str(rnd.randrange(4))}}]
        if rnd.random() < 0.4:
            muts.append({"op": "add_link", "from": f"feature:F{k}",
                         "to": f"service:S{rnd.randrange(4)}", "link": "uses"})
        if rnd.random() < 0.3:
            muts.append({"op": "set_prop", "element": f"feature:F{k}",
                         "key": "owner", "value": rnd.choice(["ann", "bo", ""])})
        d = {"title": f"w{n}: feature F{k}", "rationale": "why " * rnd.randrange(4),
             "mutations": muts}
        if rnd.random() < 0.2:
            d["supersedes_on"] = [f"feature:F{rnd.randrange(12)}"]
        batch.append(d)
        n += 1
    doc = {"decision": batch[0]} if len(batch) == 1 else {"decisions": batch}
    result = record(root, json.dumps(doc))
    assert len(result["decisions"]) == len(batch), result
    lamport = max(lamport, *(e["lamport"] for e in result["decisions"]))
    calls += 1
    if calls <= 3:
        await_as_of(n)
    if calls % 8 == 0:
        # A teammate's line (as a sync brings it): a decision on an element that
        # does not supersede what is in force there, so the element is contested
        # until the writer's next decision on it.
        lamport += 1
        k = rnd.randrange(10)
        mate.add(decision(f"mate {lamport}", [upsert("feature", f"F{k}", tier="m")]),
                 lamport=lamport, recorded_at="2026-01-01T00:00:00Z")
        with store_lock(root, 30.0):
            with open(root / "log" / f"{mate.install_id}.ndjson", "ab") as fh:
                fh.write(marshal_event(mate.events[-1]) + b"\\n")
print(calls)
"""

READER = """
import json, sys, time
from pathlib import Path
from test_model_processes import AS_OF_CUT, AS_OF_TEXT, answer_of
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.moments_write import engine_prints
from kgai_tui.core.model.open import open_model

root, cache, out, stop = (Path(a) for a in sys.argv[1:5])
deadline = time.monotonic() + 120
with open(out, "w", encoding="utf-8") as fh:
    while time.monotonic() < deadline:
        last = stop.exists()
        m = open_model(root, cache)
        try:
            shards = {s["print"][0]: int(s["events"]) for s in m.shard_states}
            sizes = {s["print"][0]: int(s["print"][1]) for s in m.shard_states}
            row = {"how": m.how, "shards": shards, "sizes": sizes,
                   "answer": answer_of(m)}
            got = m.as_of_obj(AS_OF_CUT, AS_OF_TEXT)
            row["as_of"] = None if got is None else json.dumps(got, sort_keys=True)
        finally:
            m.close()
        if got is None:  # what the CLI's as-of does then: store the moments
            whole = open_engine(root)
            m.keep_moments(whole.time_index, engine_prints(whole))
        fh.write(json.dumps(row) + "\\n")
        fh.flush()
        if last:
            break
        time.sleep(0.05)
"""


#: The reader's as-of moment: after every line (the model's current tables answer
#: it, or its moments once a record moved them along).
AS_OF_CUT = 4_102_444_800
AS_OF_TEXT = "2100-01-01T00:00:00Z"


def as_of_replayed(shards: Any) -> str:
    """as-of at :data:`AS_OF_CUT` replayed from the shards, as the reader prints it."""
    from kgai_tui.core.gosem.gotext import epoch_to_datetime
    from kgai_tui.core.reads.as_of import as_of_obj, project_as_of

    cut = epoch_to_datetime(AS_OF_CUT)
    assert cut is not None
    return json.dumps(as_of_obj(project_as_of(shards, cut), cut), sort_keys=True)


def prefix_store(root: Path, sizes: dict[str, int], at: Path) -> Path:
    """A copy of the store holding only the first ``sizes[shard]`` bytes of each: the
    log as a reader read it. That may end inside a line: a write() spanning a page
    is seen by a concurrent read() page by page, so a reader can find a line torn."""
    shutil.rmtree(at, ignore_errors=True)
    (at / "log").mkdir(parents=True)
    shutil.copy(root / "kg.config.json", at / "kg.config.json")
    for name, k in sizes.items():
        data = (root / "log" / name).read_bytes()
        assert len(data) >= k, f"{name} holds {len(data)} bytes, an answer read {k}"
        (at / "log" / name).write_bytes(data[:k])
    return at


def test_reader_sees_only_prefixes_while_a_writer_appends(tmp_path: Path) -> None:
    root, cache = tmp_path / "store", tmp_path / "cache"
    init_store(root, "alice")
    env = {**os.environ, "KGAI_TUI_CACHE_DIR": str(cache)}
    answers, stop = tmp_path / "answers.ndjson", tmp_path / "stop"
    reader = run_child(READER, str(root), str(cache), str(answers), str(stop), env=env)
    writer = run_child(WRITER, str(root), "500", "17", TEAMMATE, str(answers), env=env)
    try:
        calls = int(finished(writer, "the writer process", 120))
    finally:
        stop.touch()
    finished(reader, "the reader process", 120)

    rows = [json.loads(x) for x in answers.read_text("utf-8").splitlines()]
    # An answer's prefix is the bytes it read of each shard (its event counts alone
    # cannot tell a torn line from none).
    distinct: dict[str, Row] = {}
    as_ofs: dict[str, Row] = {}
    for row in rows:
        if row["as_of"] is not None:
            as_ofs.setdefault(row["as_of"], row)
        seen = distinct.setdefault(row["answer"], row)
        assert seen["sizes"] == row["sizes"], "one answer, two different prefixes"
    hows = Counter(row["how"] for row in rows)
    own = [n for n in os.listdir(root / "log") if not n.startswith(TEAMMATE)]
    assert len(own) == 1, own
    full = {
        name: len((root / "log" / name).read_bytes().splitlines())
        for name in os.listdir(root / "log")
    }
    assert full[own[0]] == 500, f"the writer's shard holds {full[own[0]]} lines"
    assert calls < 500, "the writer never recorded a batch"

    conflicted = 0
    for n, (answer, first) in enumerate(sorted(distinct.items(), key=_events)):
        counts = first["shards"]
        assert set(counts) <= set(full), counts
        assert all(counts[s] <= full[s] for s in counts), (counts, full)
        status = json.loads(answer)["status"]
        assert status["events"] == sum(counts.values()), (status, counts)
        conflicted += status["conflicts"] > 0
        replay = open_engine(prefix_store(root, first["sizes"], tmp_path / "prefix"))
        # The prefix store lives elsewhere: only its root differs, and answer_of
        # leaves the root out.
        expected = answer_of(replay)
        assert answer == expected, (
            f"answer {n} (shards {counts}) is not the replay of that prefix"
        )
    for n, (got, first) in enumerate(sorted(as_ofs.items(), key=_events)):
        counts = first["shards"]
        replay = open_engine(prefix_store(root, first["sizes"], tmp_path / "prefix"))
        assert got == as_of_replayed(replay.shards), (
            f"as-of answer {n} (shards {counts}) is not the replay of that prefix"
        )
    assert len(rows) >= 20, f"the reader got only {len(rows)} answers ({hows})"
    prefixes = {tuple(sorted(r["sizes"].items())) for r in distinct.values()}
    assert len(prefixes) >= 3, f"the reader saw only {len(prefixes)} prefixes"
    assert conflicted >= 1, "no answer showed a conflict"
    assert len(as_ofs) >= 3, f"the model answered as-of for {len(as_ofs)} prefixes"
    last = json.loads(rows[-1]["answer"])["status"]["events"]
    assert last == sum(full.values()), "the last answer is not the whole log"
    print(
        f"\nreader: {len(rows)} answers ({dict(hows)}), {len(distinct)} distinct, "
        f"{conflicted} with conflicts, {len(as_ofs)} as-of answers from the model; "
        f"writer: {calls} record() calls"
    )
    model = open_model(root, cache)
    assert model.how == "warm", model.how
    assert_same(model, root)


def _events(item: tuple[str, Row]) -> int:
    return sum(item[1]["sizes"].values())


# --------------------------------------------------------- SIGKILL mid-update

KILLED = """
import json, sys
from pathlib import Path
import kgai_tui.core.engine.cold_open, kgai_tui.core.heap  # what a rebuild imports
import kgai_tui.core.model.build, kgai_tui.core.model.update
from kgai_tui.core.model.open import open_model

sys.stdout.write("ready\\n")
sys.stdout.flush()
root, cache = (Path(a) for a in json.loads(sys.stdin.readline()))
m = open_model(root, cache)
print(m.how)
m.close()
"""


def spawn(err: Path) -> subprocess.Popen[bytes]:
    """A child that imports everything, says ``ready`` and waits for a store to open
    (started ahead: its imports overlap the previous round's checks). It leads its
    own process group, so anything it forks can be found after it is killed."""
    with open(err, "wb") as fh:
        return run_child(
            KILLED, stdin=subprocess.PIPE, stderr=fh, start_new_session=True
        )


def start(child: subprocess.Popen[bytes], root: Path, cache: Path) -> None:
    """Once the child is ready, have it open the store (the kill delay starts now)."""
    assert child.stdin is not None and child.stdout is not None
    line = child.stdout.readline()
    assert line == b"ready\n", f"the child did not start: {line!r}"
    child.stdin.write(json.dumps([str(root), str(cache)]).encode() + b"\n")
    child.stdin.flush()


def leftovers(child: subprocess.Popen[bytes]) -> int:
    """Kill what is left of the dead child's process group; 1 if anything was."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        return 0
    return 1


def lock_is_free(path: Path) -> bool:
    """Whether the model's writer lock can be taken now (released again at once)."""
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


ROUNDS = 12
#: Rationales are prefixes of this (short: recall scores them on every read).
RATIONALE = "because the billing team owns it now, and it is simpler to run"
STORES = 3  # a new store every ROUNDS // STORES rounds: replays stay short
#: Each store's rounds: the child builds the model, extends it twice, then ("*")
#: extends it, or rebuilds it (model deleted, or lines that sort before the last
#: applied one arrived).
SCHEDULE = ("new", "append", "append", "*")
LAST = ("delete", "late", "append", "delete", "late")


class Log:
    """Two installs' shards of one store, grown in seeded random batches."""

    def __init__(self, root: Path, rnd: random.Random) -> None:
        """An empty store at ``root``."""
        self.root = root
        self.rnd = rnd
        self.a = ShardWriter("i-aaaa", actor="alice")
        self.b = ShardWriter("i-bbbb", actor="bob")
        self.lamport = 0
        self.last: dict[str, str] = {}  # element -> a decision in force there
        (root / "log").mkdir(parents=True)

    def _decision(self, n: int) -> Any:
        rnd = self.rnd
        k = rnd.randrange(40)
        el = ("feature", f"F{k}")
        muts = [upsert(*el, tier=str(rnd.randrange(5)))]
        if rnd.random() < 0.4:
            muts.append(link("add_link", el, ("service", f"S{k % 6}"), "USES"))
        if rnd.random() < 0.1:
            muts.append(link("retire_link", el, ("service", f"S{k % 6}"), "USES"))
        if rnd.random() < 0.3:
            muts.append(set_prop(*el, "owner", rnd.choice(["ann", "bo", ""])))
        prev = self.last.get(f"F{k}")
        # Mostly supersede what is in force; otherwise the element is contested.
        sup = [prev] if prev and rnd.random() < 0.8 else []
        d = decision(
            f"d{n} on F{k}",
            muts,
            rationale=RATIONALE[: rnd.randrange(60)],
            supersedes=sup,
        )
        self.last[f"F{k}"] = d.id
        return d

    def grow(self, count: int, *, late: bool = False) -> None:
        """Append ``count`` events; ``late``: all in shard b, starting below the last
        applied event (a teammate's lines arriving late: no in-place extend)."""
        new: dict[str, list[Event]] = {}
        late_lamport = self.b.events[-1].lamport + 1 if self.b.events else 1
        assert not late or late_lamport <= self.lamport, "cannot be late"
        for n in range(count):
            if late:
                w, lamport = self.b, late_lamport + n
                self.lamport = max(self.lamport, lamport)
            else:
                self.lamport += 1
                # The last event in shard a: shard b can always be late next.
                b = n < count - 1 and self.rnd.random() < 0.15
                w, lamport = (self.b if b else self.a), self.lamport
            ev = w.add(
                self._decision(len(self.a.events) + len(self.b.events)),
                lamport=lamport,
                recorded_at=f"2026-02-{1 + lamport % 28:02d}T10:00:00Z",
            )
            new.setdefault(w.install_id + ".ndjson", []).append(ev)
        for name, evs in new.items():
            with open(self.root / "log" / name, "ab") as fh:
                fh.write(lines(evs))


def temporary_files(cache: Path) -> int:
    """Temporary files in the model directory and its recall directories."""
    return sum(1 for _ in cache.rglob(".tmp-model-*"))


def kill_round(
    r: int, child: subprocess.Popen[bytes], err: Path, root: Path, cache: Path
) -> tuple[bool, str]:
    """Have the ready child open the store, SIGKILL it after a seeded delay, and
    check what it left; whether the kill landed, and that state, in words."""
    delay = random.Random(r).uniform(0.0, 0.2)
    start(child, root, cache)
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert child.stdout is not None and child.stdin is not None
    child.stdout.close()
    child.stdin.close()
    left_behind = leftovers(child)
    stderr = err.read_text("utf-8", "replace")
    assert child.returncode in (0, -signal.SIGKILL), (
        f"round {r}: the child exited {child.returncode}:\n{stderr}"
    )
    assert "Traceback" not in stderr, f"round {r}: {stderr}"
    assert not left_behind, f"round {r}: the killed child left processes behind"
    landed = child.returncode == -signal.SIGKILL
    path = model_path(root, cache)
    assert lock_is_free(path), f"round {r}: the model lock outlived its holder"
    left = "sealed" if sealed(path) else "unsealed"
    model = open_model(root, cache)
    if not landed:
        assert model.how == "warm", f"round {r}: the child finished, yet {model.how}"
    state = f"{'killed' if landed else 'done'}/{left}/{model.how}"
    # One report rendering: the properties of test_model compare all of them.
    assert_same(model, root, reports=(3,), events_every=10)
    state += as_of_checked(r, root, cache)
    # Reopened: the model the kill left is now sealed and trusted.
    again = open_model(root, cache)
    again.close()
    assert again.how == "warm", f"round {r}: {again.how} after a clean open"
    return landed, state


#: as-of moments of the killed rounds' stores (their lines are recorded in February).
KILL_CUTS = (1_769_940_000, 1_771_000_000, AS_OF_CUT)  # 2026-02-01 10:00, 02-13, 2100


def as_of_checked(r: int, root: Path, cache: Path) -> str:
    """The model's as-of answers (where it has them) equal a replay's; then the
    moments are stored, so the next round's update (killed or not) moves them."""
    from kgai_tui.core.gosem.gotext import epoch_to_datetime, format_rfc3339
    from kgai_tui.core.reads.as_of import as_of_obj, project_as_of

    shards = open_engine(root).shards
    model = open_model(root, cache)
    answered = 0
    try:
        for cut in KILL_CUTS:
            moment = epoch_to_datetime(cut)
            assert moment is not None
            got = model.as_of_obj(cut, format_rfc3339(moment))
            if got is not None:
                answered += 1
                want = as_of_obj(project_as_of(shards, moment), moment)
                assert got == want, f"round {r}: as-of {cut} from the model"
    finally:
        model.close()
    whole = open_engine(root)
    open_model(root, cache).keep_moments(whole.time_index, engine_prints(whole))
    return f"/as-of {answered}"


def test_sigkill_during_a_model_update_never_changes_an_answer(tmp_path: Path) -> None:
    rnd = random.Random(20260517)
    cache = tmp_path / "cache"
    per_store = ROUNDS // STORES
    killed = 0
    stats: Counter[str] = Counter()
    log: Log | None = None
    errs = [tmp_path / "stderr0", tmp_path / "stderr1"]
    child = spawn(errs[0])
    try:
        for r in range(ROUNDS):
            root = tmp_path / f"store{r // per_store}"
            mode = SCHEDULE[r % per_store].replace("*", LAST[r // per_store])
            if mode == "new":  # no model yet: the child builds one
                log = Log(root, rnd)
                log.grow(rnd.randint(1500, 2500))
            else:
                assert log is not None
                log.grow(rnd.randint(800, 1500), late=mode == "late")
                if mode == "delete":
                    model_path(root, cache).unlink()
            size = sum(f.stat().st_size for f in (root / "log").iterdir())
            assert size < PARALLEL_MIN_BYTES, (
                "a store this large is rebuilt by forked workers (tested below)"
            )
            landed, state = kill_round(r, child, errs[r % 2], root, cache)
            killed += landed
            stats[f"{mode}/{state}"] += 1
            child = spawn(errs[(r + 1) % 2])
    finally:
        child.kill()
        child.wait()
        leftovers(child)
        assert child.stdout is not None and child.stdin is not None
        child.stdout.close()
        child.stdin.close()
    stats["temporary files left"] = temporary_files(cache)
    print("\n" + "\n".join(f"{v:3d} {k}" for k, v in sorted(stats.items())))
    assert killed >= ROUNDS // 2, (
        f"only {killed} of {ROUNDS} kills landed before the child finished: {stats}"
    )


# ------------------------------------------- the lock and forked pool workers

POOL_UNDER_LOCK = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from kgai_tui.core.model.seal import model_lock

with model_lock(Path(sys.argv[1])):
    # What a parallel cold open (a rebuild of a store over 8 MiB) does under the
    # lock: fork verifying workers.
    with ProcessPoolExecutor(1, mp_context=get_context("fork")) as pool:
        print(pool.submit(os.getpid).result(), flush=True)
        time.sleep(120)
"""


def test_a_killed_rebuild_leaves_its_workers_without_the_model_lock(
    tmp_path: Path,
) -> None:
    """SIGKILL leaves a fork pool's workers waiting for work for ever; they must not
    hold the model lock, or every later update of that model waits for ever."""
    root, cache = tmp_path / "store", tmp_path / "cache"
    Log(root, random.Random(5)).grow(60)
    path = model_path(root, cache)
    child = run_child(
        POOL_UNDER_LOCK, str(path), stderr=subprocess.DEVNULL, start_new_session=True
    )
    assert child.stdout is not None
    try:
        worker = int(child.stdout.readline())
        assert not lock_is_free(path), "the child does not hold the lock"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        deadline = time.monotonic() + 5
        while not lock_is_free(path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock_is_free(path), (
            f"the killed child's pool worker (pid {worker}) still holds the model "
            "lock: every later update of this model would wait for ever"
        )
        model = open_model(root, cache)
        assert model.how == "cold"
        assert_same(model, root)
    finally:
        leftovers(child)
        child.stdout.close()
