"""``init``, ``record`` and ``resolve-conflict`` end to end, through the real CLI.

Every refusal is one line on stderr with its documented exit code, and the log is
byte-identical afterwards.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.kg import conflicts_obj, history_obj
from kgai_tui.core.write.writes import init_store, record

CLI = [sys.executable, "-m", "kgai_tui"]


def kgai(
    *args: str,
    stdin: bytes | str = b"",
    env: dict[str, str] | None = None,
    preexec: Any = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m kgai_tui ARGS`` in a fresh process."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run(
        [*CLI, *args],
        input=data,
        capture_output=True,
        env={**os.environ, **(env or {})},
        preexec_fn=preexec,
        timeout=60,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the log, and the config, by name."""
    files = {p.name: p.read_bytes() for p in sorted((root / "log").iterdir())}
    files["kg.config.json"] = (root / "kg.config.json").read_bytes()
    return files


def one_line_error(done: subprocess.CompletedProcess[str], code: int) -> str:
    """Assert a refusal: the exit code and exactly one line on stderr."""
    assert done.returncode == code, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgai-tui: "), done.stderr
    return lines[0]


def doc(title: str, **extra: Any) -> str:
    """One decision setting a prop of feature:Invoice (so it has authority there)."""
    body = {
        "title": title,
        "mutations": [
            {
                "op": "upsert_element",
                "kind": "feature",
                "name": "Invoice",
                "props": {"by": title},
            }
        ],
    }
    return json.dumps({"decision": {**body, **extra}})


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store holding one decision."""
    root = tmp_path / "store"
    init_store(root, actor="alice")
    record(root, doc("first"))
    return root


def test_init_prints_the_kg_shape_and_is_idempotent(tmp_path: Path) -> None:
    """``kgai-tui init --json`` prints kg's keys; a second run changes nothing."""
    root = tmp_path / "store"
    done = kgai("init", "--store", str(root), "--actor", "alice", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out) == ["actor", "install_id", "ok", "remote", "root"]
    assert out["actor"] == "alice" and out["root"] == str(root) and out["ok"] is True
    before = snapshot(root)
    again = kgai("init", "--store", str(root), "--text")
    assert again.returncode == 0
    assert again.stdout == (
        f"✓ store ready at {root} (install {out['install_id']}, actor alice)\n"
    )
    assert snapshot(root) == before


# ------------------------------------------------------------------ record


def test_record_reads_stdin_and_files_and_prints_the_ingest_shape(
    store: Path, tmp_path: Path
) -> None:
    """``record -`` and ``record FILE`` write; --json prints the 5.5 shape."""
    done = kgai(
        "record", "--store", str(store), "--text", stdin=doc("second", rationale="why")
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("✓ recorded “second”  d_")
    assert "supersedes d_" in done.stdout and "— kept in history" in done.stdout
    path = tmp_path / "in.json"
    path.write_text(doc("third"))
    done = kgai("record", "--store", str(store), "--json", str(path))
    out = json.loads(done.stdout)
    assert list(out) == ["ok", "dry_run", "decisions", "elements"]
    assert list(out["decisions"][0]) == [
        "id",
        "title",
        "event_hash",
        "lamport",
        "shapes",
        "supersedes",
    ]
    assert out["decisions"][0]["lamport"] == 3


def test_rerecording_is_a_noop_with_a_warning(store: Path) -> None:
    """The same decision again writes nothing and says so."""
    before = snapshot(store)
    done = kgai("record", "--store", str(store), "--json", stdin=doc("first"))
    out = json.loads(done.stdout)
    assert done.returncode == 0
    assert out["warnings"] == ["decision already recorded (no-op): first"]
    assert "event_hash" not in out["decisions"][0]
    assert snapshot(store) == before


def test_dry_run_reports_what_a_real_run_writes(store: Path) -> None:
    """--dry-run writes nothing and predicts the ids and supersedes of the real run."""
    before = snapshot(store)
    batch = json.dumps(
        {
            "decisions": [
                json.loads(doc("a", rationale="1"))["decision"],
                json.loads(doc("b", rationale="2"))["decision"],
            ]
        }
    )
    dry = json.loads(
        kgai("record", "--store", str(store), "--json", "--dry-run", stdin=batch).stdout
    )
    assert snapshot(store) == before and dry["dry_run"] is True
    real = json.loads(
        kgai("record", "--store", str(store), "--json", stdin=batch).stdout
    )
    strip = [
        {k: v for k, v in d.items() if k not in ("event_hash", "lamport")}
        for d in real["decisions"]
    ]
    assert dry["decisions"] == strip
    assert real["decisions"][1]["supersedes"] == [real["decisions"][0]["id"]]


TWENTY_MB = "x" * (20 << 20)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ('{"decision": {"title": "x",', "invalid ingest JSON: unexpected EOF"),
        ("{decision}", "invalid ingest JSON: invalid character 'd' looking for"),
        (
            '{"decision": {"title": "x", "colour": "red"}}',
            'unknown field "colour" — valid decision fields are title, rationale',
        ),
        ('{"decision": {"title": "  "}}', 'decision missing required "title"'),
        (
            '{"decision": {"title": "x", "mutations": [{"op": "delete_element"}]}}',
            'unknown mutation op "delete_element"',
        ),
        (
            json.dumps(
                {
                    "decisions": [
                        {"title": "good", "supersedes_on": ["X"]},
                        {"title": "bad", "date": "last tuesday"},
                    ]
                }
            ),
            'decision "bad": invalid date "last tuesday" (use YYYY-MM-DD or RFC3339)',
        ),
        (json.dumps({"decision": {"title": TWENTY_MB}}), "the limit is 1048576 bytes"),
        (
            json.dumps({"decision": {"title": "big", "rationale": "r" * (17 << 20)}}),
            "shard lines must stay under 16 MiB",
        ),
        ("{}", 'empty ingest: provide a "decision"'),
    ],
    ids=[
        "truncated",
        "malformed",
        "unknown-field",
        "blank-title",
        "unknown-op",
        "invalid-date-in-second-decision",
        "20MB-title",
        "17MB-line",
        "empty",
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    store: Path, payload: str, message: str
) -> None:
    """Each bad input: one stderr line, exit 2, the log byte-identical."""
    before = snapshot(store)
    done = kgai("record", "--store", str(store), "--text", stdin=payload)
    line = one_line_error(done, 2)
    assert message in line
    assert len(line) < 600
    assert done.stdout == ""
    assert snapshot(store) == before


def test_bad_input_with_json_prints_the_error_shape(store: Path) -> None:
    """--json failures print ``{"error", "ok": false}`` as well."""
    done = kgai("record", "--store", str(store), "--json", stdin="[")
    one_line_error(done, 2)
    assert json.loads(done.stdout) == {
        "error": "invalid ingest JSON: unexpected EOF",
        "ok": False,
    }


def test_input_over_64_mib_is_refused(store: Path) -> None:
    """Oversize input is refused before parsing."""
    before = snapshot(store)
    done = kgai(
        "record", "--store", str(store), "--text", stdin=b" " * ((64 << 20) + 1)
    )
    assert "larger than 64 MiB" in one_line_error(done, 2)
    assert snapshot(store) == before


def test_missing_store_is_exit_3_and_not_created(tmp_path: Path) -> None:
    """record never creates a store."""
    missing = tmp_path / "nowhere"
    done = kgai("record", "--store", str(missing), stdin=doc("x"))
    assert "run `kgai-tui init" in one_line_error(done, 3)
    assert not missing.exists()


def _read_only_runner(root: Path) -> list[str]:
    """A command prefix under which ``root`` is read-only for real, or skip."""
    if os.geteuid() != 0:
        for path in [root, root / "log", *root.rglob("*")]:
            if ".git" not in path.parts:
                path.chmod(0o555 if path.is_dir() else 0o444)
        return []
    # root ignores permission bits: use a read-only bind mount in a private namespace.
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount --bind {root} {root}"],
        capture_output=True,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip("running as root without unshare: cannot make a store read-only")
    script = f'mount --bind "{root}" "{root}" && mount -o remount,ro,bind "{root}" && exec "$@"'
    return ["unshare", "-rm", "sh", "-c", script, "sh"]


def test_read_only_store_is_exit_4_and_untouched(store: Path) -> None:
    """A read-only store (EROFS or EACCES, for real) gives one line and exit 4."""
    before = snapshot(store)
    prefix = _read_only_runner(store)
    done = subprocess.run(
        [*prefix, *CLI, "record", "--store", str(store)],
        input=doc("never").encode(),
        capture_output=True,
        text=False,
        check=False,
    )
    result = subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )
    line = one_line_error(result, 4)
    assert "read-only" in line or "permission denied" in line
    assert snapshot(store) == before


@pytest.mark.parametrize("fresh", [False, True], ids=["existing-shard", "new-shard"])
def test_size_limit_mid_write_rolls_back_to_the_last_whole_line(
    tmp_path: Path, fresh: bool
) -> None:
    """A write cut short (RLIMIT_FSIZE, like a full disk) leaves the log as it was."""
    root = tmp_path / "store"
    init_store(root, actor="alice")
    if not fresh:
        record(root, doc("first"))
    before = snapshot(root)
    shards = list((root / "log").glob("*.ndjson"))
    limit = (shards[0].stat().st_size if shards else 0) + 100  # room for 100 bytes

    def cap_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = kgai(
        "record",
        "--store",
        str(root),
        stdin=doc("big", rationale="r" * 20000),
        preexec=cap_file_size,
    )
    assert "file size limit exceeded" in one_line_error(done, 4)
    assert snapshot(root) == before


ENOSPC_CHECK = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from pathlib import Path
    from kgai_tui.core.write.writes import init_store, record
    mount = Path(sys.argv[1])
    root = mount / "store"
    init_store(root, actor="full")
    record(root, '{"decision":{"title":"before","supersedes_on":["X"]}}')
    fill = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fill, b"\\0" * 4096)
    except OSError:
        pass
    os.ftruncate(fill, os.fstat(fill).st_size - 8192)  # leave 8 KiB: a partial write
    log = root / "log"
    before = {p.name: p.read_bytes() for p in log.iterdir()}
    doc = {"decision": {"title": "after", "rationale": "r" * 40000}}
    done = subprocess.run(
        [sys.executable, "-m", "kgai_tui", "record", "--store", str(root)],
        input=json.dumps(doc).encode(), capture_output=True)
    after = {p.name: p.read_bytes() for p in log.iterdir()}
    print(json.dumps({"rc": done.returncode, "stderr": done.stderr.decode(),
                      "same": before == after}))
    """
)


def test_full_disk_is_exit_4_and_untouched(tmp_path: Path) -> None:
    """ENOSPC on a real, tiny tmpfs: one line, exit 4, the log as it was."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not available")
    mount = tmp_path / "tiny"
    mount.mkdir()
    cmd = (
        f'mount -t tmpfs -o size=512k tmpfs "{mount}" && '
        f'exec "{sys.executable}" -c "$1" "{mount}"'
    )
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", cmd, "sh", ENOSPC_CHECK],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 and "mount" in done.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    report = json.loads(done.stdout)
    assert report["rc"] == 4 and report["same"], report
    assert report["stderr"].count("\n") == 1
    assert "no space left" in report["stderr"]


def test_lock_held_by_a_hung_process_times_out_with_exit_4(store: Path) -> None:
    """A writer stuck holding .kg.lock: the next one gives up within the bounded wait."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
            str(store / ".kg.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        before = snapshot(store)
        done = kgai(
            "record",
            "--store",
            str(store),
            stdin=doc("blocked"),
            env={"KGAI_TUI_LOCK_TIMEOUT": "0.5"},
        )
        assert "another writer has held" in one_line_error(done, 4)
        assert snapshot(store) == before
    finally:
        holder.kill()
        holder.wait()


# ------------------------------------------------------------------ init


def test_init_refuses_a_foreign_gitignore_with_exit_1(tmp_path: Path) -> None:
    """A .gitignore kgai did not write is left alone (exit 1, one line)."""
    root = tmp_path / "store"
    root.mkdir()
    (root / ".gitignore").write_text("*.log\n")
    done = kgai("init", "--store", str(root))
    assert "not written by kgai" in one_line_error(done, 1)
    assert (root / ".gitignore").read_text() == "*.log\n"
    assert not (root / "log").exists()


# ------------------------------------------------------------------ resolve-conflict


def _conflicted(tmp_path: Path) -> tuple[Path, str, str]:
    """Two installs decide feature:Invoice apart; syncing one shard in makes a conflict."""
    a, b = tmp_path / "a", tmp_path / "b"
    init_store(a, actor="alice")
    init_store(b, actor="bob")
    ra = record(
        a,
        json.dumps(
            {
                "decision": {
                    "title": "Invoices are PDFs",
                    "rationale": "Accounting needs files.",
                    "mutations": [
                        {
                            "op": "upsert_element",
                            "kind": "feature",
                            "name": "Invoice",
                            "props": {"format": "pdf"},
                        }
                    ],
                }
            }
        ),
    )
    rb = record(
        b,
        json.dumps(
            {
                "decision": {
                    "title": "Invoices are HTML",
                    "mutations": [
                        {
                            "op": "set_prop",
                            "element": "feature:Invoice",
                            "key": "format",
                            "value": "html",
                        }
                    ],
                }
            }
        ),
    )
    for shard in (b / "log").glob("*.ndjson"):
        shutil.copy(shard, a / "log" / shard.name)  # what a sync does
    conflicts = conflicts_obj(open_engine(a).projection)
    assert conflicts["count"] == 1
    return a, ra["decisions"][0]["id"], rb["decisions"][0]["id"]


def test_resolve_keep_ends_the_conflict_and_restates_the_kept_side(
    tmp_path: Path,
) -> None:
    """--keep: conflicts empty, history keeps both, props are the kept side's again."""
    root, kept, lost = _conflicted(tmp_path)
    done = kgai(
        "resolve-conflict",
        "feature:Invoice",
        "--keep",
        kept[:10],
        "--store",
        str(root),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    new_id = out["decisions"][0]["id"]
    assert out["decisions"][0]["supersedes"] == sorted([kept, lost])
    engine = open_engine(root)
    p = engine.projection
    assert conflicts_obj(p) == {"conflicts": None, "count": 0, "ok": True}
    rows = {r["id"]: r for r in history_obj(p, "feature:Invoice")["decisions"]}
    assert set(rows) == {kept, lost, new_id}
    assert [rows[i]["is_head"] for i in (kept, lost, new_id)] == [False, False, True]
    new = next(
        e.decision for e in engine.events if e.decision and e.decision.id == new_id
    )
    assert new.title == "Invoices are PDFs" and new_id != kept
    assert new.rationale == (
        "Accounting needs files.\n\n"
        f"Resolved conflict on feature:Invoice: kept {kept} over {lost}."
    )
    assert new.targets == new.shapes and not new.provenance_only
    assert p.element(new.targets[0])[2] == "format=pdf"  # type: ignore[index]
    for item in engine.all_shard_events():
        assert item.decoded.hash_ok and item.decoded.decision_id_ok
    # Running the same command again writes nothing.
    before = snapshot(root)
    again = kgai(
        "resolve-conflict", "feature:Invoice", "--keep", kept[:10], "--store", str(root)
    )
    assert "no conflict on feature:Invoice" in one_line_error(again, 1)
    assert snapshot(root) == before


def test_resolve_keep_reads_the_kept_record_from_its_line_not_a_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the read model, --keep finds the kept decision's own event by its
    line (no whole store opened: at 1M that replay cost 14.7 s and 1.6 GB) and
    writes what the replay's event gives, with the model switched off."""
    from kgai_tui.core.engine import open as engine_open
    from kgai_tui.core.model.open import open_model
    from kgai_tui.core.write.resolve import resolve_conflict

    root, kept, lost = _conflicted(tmp_path)
    other = tmp_path / "other"
    shutil.copytree(root, other)
    open_model(root).close()

    def no_replay(*_: Any, **__: Any) -> Any:
        raise AssertionError("the whole store was opened")

    with monkeypatch.context() as m:
        m.setattr(engine_open, "open_engine", no_replay)
        through_model = resolve_conflict(root, "feature:Invoice", keep=kept[:10])
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    replayed = resolve_conflict(other, "feature:Invoice", keep=kept[:10])

    def written(store: Path, out: dict[str, Any]) -> dict[str, Any]:
        new_id = out["decisions"][0]["id"]
        events = open_engine(store).events
        ev = next(e for e in events if e.decision and e.decision.id == new_id)
        assert ev.decision is not None
        return {
            "title": ev.decision.title,
            "rationale": ev.decision.rationale,
            "supersedes": ev.decision.supersedes,
            "mutations": ev.decision.mutations,
        }

    assert written(root, through_model) == written(other, replayed)
    assert written(root, through_model)["supersedes"] == tuple(sorted([kept, lost]))


def test_resolve_title_writes_what_kg_ingest_supersedes_on_writes(
    tmp_path: Path,
) -> None:
    """--title records the decision ``kg ingest`` would for supersedes_on the element."""
    root, kept, lost = _conflicted(tmp_path)
    same_as_ingest = record(
        root,
        json.dumps(
            {
                "decision": {
                    "title": "Both formats",
                    "rationale": "Offer PDF and HTML.",
                    "supersedes_on": ["feature:Invoice"],
                }
            }
        ),
        dry_run=True,
    )["decisions"][0]
    done = kgai(
        "resolve-conflict",
        "feature:Invoice",
        "--title",
        "Both formats",
        "--rationale",
        "Offer PDF and HTML.",
        "--store",
        str(root),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "✓ resolved the conflict on feature:Invoice\n✓ recorded"
    )
    p = open_engine(root).projection
    assert same_as_ingest["id"] in p.dec_index
    assert same_as_ingest["supersedes"] == sorted([kept, lost])
    assert conflicts_obj(p)["count"] == 0


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["feature:Invoice"], 2, "give exactly one of --keep"),
        (["feature:Invoice", "--keep", "d_x", "--title", "t"], 2, "give exactly one"),
        (
            ["feature:Invoice", "--keep", "d_nope"],
            2,
            "is not one of the decisions in force",
        ),
        (["feature:Nothing", "--title", "t"], 1, "no element"),
        (["feature:Invoice", "--title", " "], 2, 'decision missing required "title"'),
    ],
)
def test_resolve_refusals(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    """Bad resolve-conflict arguments: one line, documented code, nothing written."""
    root, _, _ = _conflicted(tmp_path)
    before = snapshot(root)
    done = kgai("resolve-conflict", *args, "--store", str(root))
    assert message in one_line_error(done, code)
    assert snapshot(root) == before
