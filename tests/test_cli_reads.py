"""The CLI reads through the real console script: stable bytes, exit codes, speed.

Two stores hold the same events in differently named and differently split shard files;
every read must print the same --json bytes on both (issue 2, acceptance).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from builders import (
    ShardWriter,
    as_person,
    decision,
    link,
    set_prop,
    upsert,
    write_store,
)

from kgai_tui.core.wire.codec import marshal_event
from kgai_tui.core.wire.model import Event

# Not imported from conftest: tests/sync_s3 has a conftest of its own, and the
# name resolves to whichever directory pytest put first on sys.path.
GO_VECTORS = Path(__file__).parent / "fixtures" / "go-vectors"

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")
GO_DIGEST = "sha256:e2eb7f444c57c1cea9bcc6955ab5ecfef7446f3745d9fa4a0fcbe98085a69e28"

ELEMENTS = [
    ("feature", "Invoice", "src/billing/invoice/*"),
    ("feature", "Pricing", "src/billing/pricing.go"),
    ("service", "Billing", "src/billing/*"),
    ("module", "PDF renderer", "src/pdf/**"),
    ("concept", "İstanbul office", ""),
    ("feature", "Search", "src/search/*.go"),
    ("service", "Catalog", "src/catalog/*"),
    ("concept", "naïve résumé", ""),
]
TOPICS = ["invoice", "pricing", "billing", "pdf", "search", "catalog", "office"]


def build_events(count: int = 40, seed: int = 2026) -> dict[str, list[Event]]:
    """Three writers' chains of ``count`` decisions, with conflicts and supersedes."""
    rnd = random.Random(seed)
    writers = {w: ShardWriter(w, actor=w) for w in ("i-ana", "i-bo", "i-cy")}
    lamports = dict.fromkeys(writers, 0)
    ids: list[str] = []
    for i in range(count):
        w = rnd.choice(sorted(writers))
        kind, name, paths = rnd.choice(ELEMENTS)
        other = rnd.choice(ELEMENTS)
        muts = [upsert(kind, name, paths=paths) if paths else upsert(kind, name)]
        roll = rnd.random()
        if roll < 0.3:
            muts += [
                upsert(other[0], other[1]),
                link("add_link", (kind, name), other[:2], "DEPENDS_ON"),
            ]
        elif roll < 0.45:
            muts.append(link("retire_link", (kind, name), other[:2], "DEPENDS_ON"))
        elif roll < 0.7:
            muts.append(set_prop(kind, name, "owner", rnd.choice(["ana", "bo", "cy"])))
        topic = rnd.choice(TOPICS)
        supersedes = [rnd.choice(ids)] if ids and rnd.random() < 0.3 else []
        d = decision(
            f"Decision {i} about {topic}",
            muts,
            rationale=f"because {topic} needs it\nsecond line",
            author=w[2:],
            supersedes=supersedes,
        )
        ids.append(d.id)
        lamports[w] += rnd.randint(1, 2)
        day, hour = divmod(i * 5, 24)
        writers[w].add(
            d,
            lamport=lamports[w],
            recorded_at=f"2026-04-{1 + day:02d}T{hour:02d}:00:00Z",
        )
    return {w: sw.events for w, sw in writers.items()}


def _bytes(events: list[Event]) -> bytes:
    return b"".join(marshal_event(ev) + b"\n" for ev in events)


def write_two_layouts(base: Path) -> tuple[Path, Path]:
    """The same events as two stores with other file names, splits and listing order."""
    events = build_events()
    ana, bo, cy = events["i-ana"], events["i-bo"], events["i-cy"]
    half_a, half_c = len(ana) // 2, len(cy) // 3
    one = write_store(
        base / "one",
        {
            "i-ana.ndjson": _bytes(ana),
            "i-bo.ndjson": _bytes(bo),
            "i-cy.ndjson": _bytes(cy[:half_c]),
            "i-cy-2.ndjson": _bytes(cy[half_c:]),
        },
    )
    # Created in another order, under names that list in another order.
    two = write_store(
        base / "two",
        {
            "w0-cy.ndjson": _bytes(cy),
            "w5-bo.ndjson": _bytes(bo),
            "w1-ana-tail.ndjson": _bytes(ana[half_a:]),
            "w9-ana-head.ndjson": _bytes(ana[:half_a]),
        },
    )
    return one, two


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two stores with the same events laid out differently."""
    return write_two_layouts(tmp_path_factory.mktemp("layouts"))


def run(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run the installed console script."""
    return subprocess.run(
        [KGAI_TUI, *as_person(args)],
        capture_output=True,
        check=False,
        cwd=cwd,
        env=env,
        timeout=60,
    )


# --------------------------------------------------------------------------- (a)

READS: list[list[str]] = [
    ["status"],
    ["doctor"],
    ["conflicts"],
    ["conflicts", "--about", "INVOICE"],
    ["heads"],
    ["heads", "feature:Invoice"],
    ["history", "feature:Invoice"],
    ["history", "service:Billing"],
    ["resolve", "service:Billing"],
    ["resolve", "concept:nowhere"],
    [
        "context",
        "--paths",
        "src/billing/invoice/render.go,src/pdf/x.go",
        "--about",
        "invoice pdf",
    ],
    ["context"],
    ["recall", "--about", "pricing", "--max", "3"],
    ["as-of", "2026-04-03"],
    ["as-of", "2026-04-04T12:00:00Z"],
    ["as-of", "2026-04-05T14:00:00+02:00"],
    ["export", "--canonical"],
    ["export"],
]
ROOT_LINE = re.compile(rb'^  "root": "[^"\n]*",\n', re.MULTILINE)


def test_layouts_differ_in_listing_order(layouts: tuple[Path, Path]) -> None:
    """The two stores really list their shards in different orders and splits."""
    one, two = layouts
    assert sorted(os.listdir(one / "log")) != sorted(os.listdir(two / "log"))
    assert {len(os.listdir(s / "log")) for s in layouts} == {4}


def test_every_read_is_byte_identical_across_layouts(
    layouts: tuple[Path, Path],
) -> None:
    """Each --json read prints the same bytes on both layouts (status/doctor: no root)."""
    jobs = [(args, store) for args in READS for store in layouts]
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = list(
            pool.map(lambda job: run(*job[0], "--json", "--store", str(job[1])), jobs)
        )
    for i, args in enumerate(READS):
        first, second = procs[2 * i], procs[2 * i + 1]
        assert first.returncode == second.returncode == 0, (args, first.stderr)
        assert first.stderr == second.stderr == b"", args
        out1, out2 = first.stdout, second.stdout
        if args[0] in ("status", "doctor"):
            assert json.loads(out1)["root"] == str(layouts[0])
            assert json.loads(out2)["root"] == str(layouts[1])
            out1, out2 = ROOT_LINE.sub(b"", out1), ROOT_LINE.sub(b"", out2)
            assert b'"root"' not in out1
        assert out1 == out2, args


def test_reads_are_not_vacuous(layouts: tuple[Path, Path]) -> None:
    """The store behind the byte comparisons has conflicts, links, history and recall."""
    store = str(layouts[0])
    conflicts = json.loads(run("conflicts", "--json", "--store", store).stdout)
    assert conflicts["count"] >= 2
    history = json.loads(
        run("history", "feature:Invoice", "--json", "--store", store).stdout
    )
    assert len(history["decisions"]) >= 3
    export = json.loads(run("export", "--json", "--store", store).stdout)
    assert export["links"] and len(export["decisions"]) == 40
    doctor = json.loads(run("doctor", "--json", "--store", store).stdout)
    assert doctor["ok"] is True and doctor["problems"] is None


# --------------------------------------------------------------------------- (b)


def _one_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text
    lines = text.splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_history_of_unknown_element_exits_1(layouts: tuple[Path, Path]) -> None:
    """`history` of an element no decision touches exits 1 with one stderr line."""
    for extra in ([], ["--json"]):
        proc = run(
            "history", "concept:No such thing", "--store", str(layouts[0]), *extra
        )
        assert proc.returncode == 1
        assert "no such thing" in _one_line(proc.stderr).lower()
        if extra:
            assert json.loads(proc.stdout)["ok"] is False


def test_as_of_bad_timestamp_exits_2(layouts: tuple[Path, Path]) -> None:
    """`as-of yesterday` exits 2 with a one-line message naming the format."""
    for stamp in ("yesterday", "2026-13-01", "2026-04-01t00:00:00z"):
        proc = run("as-of", stamp, "--json", "--store", str(layouts[0]))
        assert proc.returncode == 2, (stamp, proc.stderr)
        line = _one_line(proc.stderr)
        assert stamp in line and "RFC3339" in line, line


NO_STORE_COMMANDS = [
    ["status"],
    ["doctor"],
    ["conflicts"],
    ["heads"],
    ["history", "feature:Invoice"],
    ["resolve", "feature:Invoice"],
    ["context"],
    ["as-of", "2026-04-03"],
    ["export", "--canonical"],
]


def test_missing_store_answers_empty_in_json_exits_3_in_text_and_creates_nothing(
    tmp_path: Path,
) -> None:
    """No store via --store, KGAI_STORE, KGAI_PROJECT or cwd: in JSON kg's empty
    answer with its note (exit 0), as text one line and exit 3; no dirs made."""
    empty_project = tmp_path / "empty-project"
    empty_project.mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    nonexistent = Path("/nonexistent")
    assert not nonexistent.exists()
    missing = tmp_path / "missing" / "store"
    base_env = dict(os.environ)
    variants: list[tuple[list[str], dict[str, str]]] = [
        (["--store", str(nonexistent)], base_env),
        (["--store", str(missing)], base_env),
        ([], {**base_env, "KGAI_STORE": str(nonexistent)}),
        ([], {**base_env, "KGAI_STORE": str(missing)}),
        ([], {**base_env, "KGAI_PROJECT": str(empty_project)}),
        ([], base_env),  # cwd is not a git repo and has no .kgai/store
    ]
    # Every read once through --store; two reads through each other route.
    jobs = [
        (cmd + variants[0][0] + [mode], base_env)
        for cmd in NO_STORE_COMMANDS
        for mode in ("--json", "--text")
    ]
    jobs += [
        (cmd + flags + [mode], env)
        for flags, env in variants[1:]
        for cmd in (["status"], ["conflicts"])
        for mode in ("--json", "--text")
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = list(pool.map(lambda job: run(*job[0], cwd=cwd, env=job[1]), jobs))
    for (args, _), proc in zip(jobs, procs, strict=True):
        if args[-1] == "--text":
            assert proc.returncode == 3, (args, proc.stderr)
            assert "store" in _one_line(proc.stderr), args
            continue
        assert proc.returncode == 0, (args, proc.stderr)
        answer = json.loads(proc.stdout)
        assert answer["ok"] is True and list(answer) == sorted(answer), args
        assert answer["note"].startswith("no knowledge graph store at "), args
    assert not nonexistent.exists()
    assert not missing.parent.exists()
    assert list(empty_project.iterdir()) == []
    assert list(cwd.iterdir()) == []


# --------------------------------------------------------------------------- (c)


def test_conflicts_whole_process_answers_the_conflicts(tmp_path: Path) -> None:
    """`kgai-tui conflicts --json` on ~40 decisions lists its 2+ conflicts, every run.

    How fast it answers is measured by the benchmarks, not asserted here.
    """
    one, _ = write_two_layouts(tmp_path)
    for _ in range(3):
        proc = run("conflicts", "--json", "--store", str(one))
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["count"] >= 2


# --------------------------------------------------------------------------- (d)


def test_go_vectors_export_digest_and_doctor() -> None:
    """The Go-written fixture store exports the reference digest and doctor is clean."""
    proc = run("export", "--canonical", "--json", "--store", str(GO_VECTORS))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["digest"] == GO_DIGEST
    assert proc.stderr == b""
    doctor = run("doctor", "--json", "--store", str(GO_VECTORS))
    assert doctor.returncode == 0, doctor.stdout
    assert json.loads(doctor.stdout)["ok"] is True


def test_far_dates_in_as_of_do_not_crash(layouts: tuple[Path, Path]) -> None:
    """`as-of 9999-12-31` is the end of that day; extreme RFC3339 never gives a traceback."""
    proc = run("as-of", "9999-12-31", "--json", "--store", str(layouts[0]))
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-300:]
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["at"] == "9999-12-31T23:59:59Z"
    for stamp in ("0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"):
        proc = run("as-of", stamp, "--json", "--store", str(layouts[0]))
        assert proc.returncode in (0, 2), (stamp, proc.stderr.decode()[-300:])
        if proc.returncode == 2:
            _one_line(proc.stderr)


def test_non_utf8_paths_and_arguments_do_not_crash(
    tmp_path: Path, layouts: tuple[Path, Path]
) -> None:
    """Non-UTF-8 bytes in a store path or an argument give JSON, never a traceback."""
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/store-\xff"))
    proc = run("status", "--json", "--store", str(odd))
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-300:]
    answer = json.loads(proc.stdout)  # kg's empty answer: its note names the path
    assert answer["ok"] is True and "\ufffd" in answer["note"]
    proc = run("status", "--text", "--store", str(odd))
    assert proc.returncode == 3
    _one_line(proc.stderr)
    assert not os.path.exists(odd)

    write_two_layouts(odd)
    proc = run("status", "--json", "--store", str(odd / "one"))
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-300:]
    assert json.loads(proc.stdout)["decisions"] == 40

    store = str(layouts[0])
    proc = subprocess.run(
        [KGAI_TUI, "resolve", b"concept:\xff", "--json", "--store", store],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-300:]
    assert json.loads(proc.stdout)["existed"] is False
    proc = subprocess.run(
        [KGAI_TUI, "history", b"concept:\xff", "--json", "--store", store],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1
    _one_line(proc.stderr)
