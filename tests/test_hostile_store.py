"""A hostile store: every valid event still loads, every bad line is named, nothing written.

The store mixes valid events from two writers with malformed JSON, a torn tail, a
17 MiB line, invalid UTF-8, wrong types, a tampered event, a decision whose id does not
match its content, blank lines and a CRLF line ending (spec 2.8, 2.10, 3.1, 3.3).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from builders import ShardWriter, decision, link, set_prop, upsert, write_store

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.export import export_digest, export_parts
from kgai_tui.core.wire.codec import compute_hash, event_obj, marshal_event
from kgai_tui.core.wire.model import Event

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")
BIG = 17 * 1024 * 1024

# Bad-line categories and the words their problem must contain (lowercase).
REASONS = {
    "malformed": "malformed",
    "torn": "torn",
    "too_long": "16 mib",
    "wrong_type": "wrong type",
    "bad_hash": "bad content hash",
    "bad_id": "decision id",
    "not_object": "",
}


@dataclass
class ShardPlan:
    """One shard file being assembled: its lines and what each line is."""

    name: str
    chunks: list[bytes] = field(default_factory=list)
    bad: dict[int, str] = field(default_factory=dict)  # line number -> category
    good: list[int] = field(default_factory=list)

    def add(self, raw: bytes, *, bad: str = "", end: bytes = b"\n") -> None:
        """Append one line (``bad`` names its category when it must be reported)."""
        self.chunks.append(raw + end)
        number = len(self.chunks)
        if bad:
            self.bad[number] = bad
        elif raw.strip():
            self.good.append(number)

    def to_bytes(self) -> bytes:
        """The file's bytes."""
        return b"".join(self.chunks)


@dataclass
class Hostile:
    """The hostile store, the clean store of its valid events, and the bad lines."""

    root: Path
    clean: Path
    plans: list[ShardPlan]
    valid_decision_ids: set[str]


def _line(ev: Event) -> bytes:
    return marshal_event(ev)


def _retyped(ev: Event, key: str, raw_value: bytes) -> bytes:
    """An otherwise valid event line whose ``key`` holds ``raw_value`` (raw JSON)."""
    marker = b"@@VALUE@@"
    obj = event_obj(ev)
    obj[key] = marker.decode()
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()
    return text.replace(b'"' + marker + b'"', raw_value)


def build_hostile(base: Path) -> Hostile:
    """Write the hostile store and the clean store holding only its valid events."""
    a = ShardWriter("i-a", actor="ana")
    b = ShardWriter("i-b", actor="bo")
    plan_a, plan_b, plan_c = (
        ShardPlan("i-a.ndjson"),
        ShardPlan("i-b.ndjson"),
        ShardPlan("i-c.ndjson"),
    )
    clean_a: list[Event] = []
    clean_b: list[Event] = []

    inv, bill, pdf = ("feature", "Invoice"), ("service", "Billing"), ("module", "PDF")
    d1 = decision("Invoice exists", [upsert(*inv, paths="src/billing/*")], author="ana")
    d2 = decision(
        "Billing exists", [upsert(*bill), link("add_link", bill, inv, "OWNS")]
    )
    d3 = decision(
        "Invoice renders PDFs",
        [upsert(*inv), set_prop(*inv, "fmt", "pdf")],
        supersedes=[d1.id],
    )
    d4 = decision(
        "Invoice renders HTML",
        [upsert(*inv), set_prop(*inv, "fmt", "html")],
        supersedes=[d1.id],
        author="bo",
    )
    d5 = decision("PDF module", [upsert(*pdf), link("add_link", inv, pdf, "USES")])
    d6 = decision("Billing note", None, rationale="just a note", targets=[])
    d7 = decision(
        "Legacy shape", [upsert(*bill, tier="1")], targets=[], provenance_only=False
    )
    d8 = decision("Drop link", [link("retire_link", bill, inv, "OWNS")], author="bo")

    t = "2026-03-0{}T10:00:00Z".format

    # ---- shard i-a
    ev = a.add(d1, lamport=1, recorded_at=t(1))
    plan_a.add(_line(ev))
    clean_a.append(ev)
    plan_a.add(b'{"hash":"sha256:00","op":"assert","lamport":', bad="malformed")
    plan_a.add(b"")  # blank line
    ev = a.add(d2, lamport=2, recorded_at=t(2))
    plan_a.add(_line(ev), end=b"\r\n")  # CRLF: Go's TrimSpace makes it valid
    clean_a.append(ev)
    plan_a.add(b"   \t ")  # white space only
    huge = ShardWriter("i-a").add(
        decision("Huge", [upsert("concept", "Huge")], rationale="x" * BIG),
        lamport=3,
        recorded_at=t(3),
    )
    plan_a.add(_line(huge), bad="too_long")
    ev = a.add(d3, lamport=4, recorded_at=t(3))
    plan_a.add(_line(ev))
    clean_a.append(ev)
    tampered = a.add(
        decision("Tampered", [upsert("concept", "Tampered")]),
        lamport=5,
        recorded_at=t(4),
    )
    plan_a.add(
        _line(tampered).replace(b'"title":"Tampered"', b'"title":"Tampared"'),
        bad="bad_hash",
    )
    ev = a.add(d5, lamport=6, recorded_at=t(4))
    plan_a.add(_line(ev))
    clean_a.append(ev)
    # Invalid UTF-8 that Go decodes to U+FFFD, over which the hash was computed: valid.
    fffd = a.add(
        decision("Byte \ufffd title", [upsert("concept", "FFFD")]),
        lamport=7,
        recorded_at=t(5),
    )
    fffd_line = _line(fffd)
    assert b"\xef\xbf\xbd" in fffd_line
    plan_a.add(fffd_line.replace(b"\xef\xbf\xbd", b"\xff"))
    clean_a.append(fffd)
    torn = ShardWriter("i-a").add(decision("Torn"), lamport=8, recorded_at=t(6))
    plan_a.add(_line(torn)[:120], bad="torn", end=b"")

    # ---- shard i-b
    ev = b.add(d4, lamport=2, recorded_at=t(2))
    plan_b.add(_line(ev))
    clean_b.append(ev)
    template = ShardWriter("i-x").add(decision("Typed"), lamport=9, recorded_at=t(7))
    plan_b.add(_retyped(template, "lamport", b'"1"'), bad="wrong_type")
    ev = b.add(d6, lamport=3, recorded_at=t(3))
    plan_b.add(_line(ev))
    clean_b.append(ev)
    plan_b.add(_retyped(template, "lamport", b"1.0"), bad="wrong_type")
    plan_b.add(_retyped(template, "decision", b"[]"), bad="wrong_type")
    plan_b.add(_retyped(template, "parents", b'"x"'), bad="wrong_type")
    plan_b.add(_retyped(template, "lamport", b"1e3"), bad="wrong_type")
    # The decision id does not match its content; the event hash is right (gate 2).
    wrong = decision("Wrong id", [upsert("concept", "WrongId")])
    wrong = replace(wrong, id="d_" + "0" * 24)
    mismatch = b.add(wrong, lamport=4, recorded_at=t(4))
    assert compute_hash(mismatch) == mismatch.hash
    plan_b.add(_line(mismatch), bad="bad_id")
    ev = b.add(d7, lamport=5, recorded_at=t(5))
    plan_b.add(_line(ev))
    clean_b.append(ev)
    # Invalid UTF-8 inside a string of a hashed event: no longer verifies (gate 1).
    broken = b.add(decision("plain title"), lamport=6, recorded_at=t(5))
    plan_b.add(
        _line(broken).replace(b"plain title", b"pl\xffain title"), bad="bad_hash"
    )
    ev = b.add(d8, lamport=7, recorded_at=t(6))
    plan_b.add(_line(ev))
    clean_b.append(ev)

    # ---- shard i-c: lines that are not events at all
    plan_c.add(b"not json at all", bad="malformed")
    plan_c.add(b"[1,2,3]", bad="not_object")
    plan_c.add(b"null", bad="bad_hash")  # Go decodes null into a zero Event
    plan_c.add(b'{"hash":"sha256:1"}{"hash":"sha256:2"}', bad="malformed")

    plans = [plan_a, plan_b, plan_c]
    root = write_store(base / "hostile", {p.name: p.to_bytes() for p in plans})
    clean = write_store(
        base / "clean",
        {
            "i-a.ndjson": b"".join(_line(e) + b"\n" for e in clean_a),
            "i-b.ndjson": b"".join(_line(e) + b"\n" for e in clean_b),
        },
    )
    valid = {e.decision.id for e in [*clean_a, *clean_b] if e.decision is not None}
    return Hostile(root, clean, plans, valid)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Hostile:
    """The hostile store, built once for the module."""
    return build_hostile(tmp_path_factory.mktemp("hostile"))


def snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` with the sha256 of its bytes (``dir`` for folders)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for f in filenames:
            path = Path(dirpath) / f
            out[os.path.relpath(path, root)] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return out


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the installed console script."""
    return subprocess.run(
        [KGAI_TUI, *args], capture_output=True, check=False, timeout=120
    )


# --------------------------------------------------------------------------- library


def test_every_valid_event_loads(hostile: Hostile) -> None:
    """Engine.open projects exactly the valid events: same digest as the clean store."""
    engine = open_engine(hostile.root)
    clean = open_engine(hostile.clean)
    assert not clean.problems
    got = export_parts(engine.projection)
    assert got == export_parts(clean.projection)
    assert export_digest(got) == export_digest(export_parts(clean.projection))
    assert {row["id"] for row in got["decisions"]} == hostile.valid_decision_ids


def test_invalid_utf8_that_go_decodes_to_fffd_still_verifies(hostile: Hostile) -> None:
    """A raw 0xFF byte decodes to U+FFFD as in Go; a hash over that text verifies."""
    titles = set(open_engine(hostile.root).projection.dec_title)
    assert "Byte \ufffd title" in titles
    assert "Tampared" not in titles and "Tampered" not in titles
    assert "Wrong id" not in titles


def test_problems_name_every_bad_line(hostile: Hostile) -> None:
    """Each bad line is one problem located by shard and line; no valid line is named."""
    problems = [
        (p.shard, p.line, p.reason.lower()) for p in open_engine(hostile.root).problems
    ]
    for plan in hostile.plans:
        for line, category in plan.bad.items():
            found = [r for s, n, r in problems if s == plan.name and n == line]
            assert found, f"{plan.name}:{line} ({category}) not reported: {problems}"
            assert any(REASONS[category] in r for r in found), (plan.name, line, found)
        for line in plan.good:
            assert not [p for p in problems if p[:2] == (plan.name, line)], line


# --------------------------------------------------------------------------- CLI


def test_doctor_names_every_problem_and_fails(hostile: Hostile) -> None:
    """`doctor --json` exits 1 and lists every bad line as log/<shard>:<line>."""
    proc = run("doctor", "--store", str(hostile.root), "--json")
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    problems: list[str] = report["problems"]
    for plan in hostile.plans:
        for line, category in plan.bad.items():
            prefix = f"log/{plan.name}:{line}: "
            hits = [p for p in problems if p.startswith(prefix)]
            assert hits, f"{prefix} ({category}) missing from {problems}"
            assert any(REASONS[category] in h.lower() for h in hits), hits
        for line in plan.good:
            prefix = f"log/{plan.name}:{line}: "
            assert not [p for p in problems if p.startswith(prefix)], prefix
    assert len(problems) >= sum(len(p.bad) for p in hostile.plans)


READS: list[list[str]] = [
    ["status"],
    ["conflicts"],
    ["conflicts", "--about", "invoice"],
    ["heads"],
    ["heads", "feature:Invoice"],
    ["history", "feature:Invoice"],
    ["resolve", "feature:Invoice"],
    ["context", "--paths", "src/billing/x.go", "--about", "invoice pdf"],
    ["recall", "--about", "billing"],
    ["as-of", "2026-03-04"],
    ["as-of", "2026-03-04T10:00:00Z"],
    ["export", "--canonical"],
]


def test_reads_succeed_with_one_warning_and_write_nothing(hostile: Hostile) -> None:
    """Every read exits 0 with a one-line stderr warning; the store is left untouched."""
    before = snapshot(hostile.root)

    def runner(args: list[str]) -> subprocess.CompletedProcess[bytes]:
        return run(*args, "--store", str(hostile.root), "--json")

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(runner, READS))
    results.append(run("doctor", "--store", str(hostile.root)))
    for args, proc in zip([*READS, ["doctor"]], results, strict=True):
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err, (args, err)
        if args != ["doctor"]:
            assert proc.returncode == 0, (args, err)
            json.loads(proc.stdout)
        lines = err.splitlines()
        assert len(lines) == 1 and "warning" in lines[0], (args, err)
    assert snapshot(hostile.root) == before
    assert sorted(p.name for p in (hostile.root / "log").iterdir()) == [
        "i-a.ndjson",
        "i-b.ndjson",
        "i-c.ndjson",
    ]
    assert sorted(os.listdir(hostile.root)) == ["log"]


def test_hostile_export_matches_clean_store(hostile: Hostile) -> None:
    """`export --canonical` prints the same bytes on the hostile and the clean store."""
    hostile_out = run("export", "--canonical", "--store", str(hostile.root))
    clean_out = run("export", "--canonical", "--store", str(hostile.clean))
    assert hostile_out.returncode == clean_out.returncode == 0
    assert hostile_out.stdout == clean_out.stdout
    assert clean_out.stderr == b""


# --------------------------------------------------------------------------- edges


def test_non_utf8_shard_name_is_reported_not_fatal(tmp_path: Path) -> None:
    """A shard whose file name is not UTF-8 is read; doctor --json names its bad line."""
    writer = ShardWriter("i-a")
    writer.add(
        decision("One", [upsert("concept", "One")]),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    root = write_store(tmp_path / "store", {"i-a.ndjson": writer.to_bytes()})
    log = os.fsencode(root / "log")
    with open(os.path.join(log, b"i-\xff.ndjson"), "wb") as fh:
        fh.write(b"garbage\n")
    proc = run("doctor", "--json", "--store", str(root))
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    assert proc.returncode == 1
    problems = json.loads(proc.stdout)["problems"]
    assert any(p.startswith("log/i-") and ".ndjson:1: " in p for p in problems)
    status = run("status", "--json", "--store", str(root))
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["decisions"] == 1


def test_recorded_at_at_the_edges_of_time_does_not_break_reads(tmp_path: Path) -> None:
    """RFC3339 times Go accepts but Python cannot hold (year 0, year 10000) never crash."""
    writer = ShardWriter("i-a")
    for n, stamp in enumerate(
        [
            "2026-01-01T00:00:00Z",
            "0001-01-01T00:00:00+01:00",  # 0000-12-31T23:00:00Z in Go
            "9999-12-31T23:59:59-01:00",  # 10000-01-01T00:59:59Z in Go
        ],
        start=1,
    ):
        writer.add(
            decision(f"At {stamp}", [upsert("concept", f"E{n}")]),
            lamport=n,
            recorded_at=stamp,
        )
    root = write_store(tmp_path / "store", {"i-a.ndjson": writer.to_bytes()})
    engine = open_engine(root)  # must not raise
    assert len(engine.projection.dec_id) == 3
    for args in (["export", "--canonical"], ["history", "concept:E2"], ["heads"]):
        proc = run(*args, "--json", "--store", str(root))
        assert proc.returncode == 0, (args, proc.stderr.decode()[-300:])
    proc = run("as-of", "2026-06-01", "--json", "--store", str(root))
    assert proc.returncode == 0, proc.stderr.decode()[-300:]
    # Go keeps the year-0 event (not after the cut) and drops the year-10000 one.
    assert json.loads(proc.stdout)["elements"] == ["E1", "E2"]
