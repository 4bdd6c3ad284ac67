"""The CLI's messages help the user on to the next step (issue 18, point 5).

Every test runs the installed console script as a real process on stores made with
``kgai-tui init`` and ``kgai-tui record``, and checks the exact exit code and the key
words of the message.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import as_person

KGAI_TUI = str(Path(sys.executable).parent / "kgai-tui")


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``kgai-tui ARGS`` with ``stdin`` as its input, output captured."""
    return subprocess.run(
        [KGAI_TUI, *as_person(args)],
        input=stdin,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=60,
        check=False,
    )


def upsert(title: str, kind: str, name: str) -> dict[str, Any]:
    """A decision that upserts one element."""
    return {
        "title": title,
        "rationale": "Because.",
        "author": "alice",
        "mutations": [{"op": "upsert_element", "kind": kind, "name": name}],
    }


def make_store(root: Path, *decisions: dict[str, Any]) -> Path:
    """``kgai-tui init`` a store at ``root`` and ``record`` ``decisions`` into it."""
    done = run("init", "--store", str(root), "--actor", "alice")
    assert done.returncode == 0, done.stderr
    if decisions:
        document = json.dumps({"decisions": list(decisions)})
        done = run("record", "--store", str(root), stdin=document)
        assert done.returncode == 0, done.stderr
    return root


def error_of(out: subprocess.CompletedProcess[str]) -> str:
    """The error of a ``--json`` failure, checking its shape is kg's."""
    obj = json.loads(out.stdout)
    assert set(obj) == {"error", "ok"} and obj["ok"] is False, obj
    error: str = obj["error"]
    return error


@pytest.fixture
def invoices(tmp_path: Path) -> Path:
    """A store where the only invoice element is ``feature:Invoice``."""
    return make_store(
        tmp_path / "store",
        upsert("Invoices are PDFs", "feature", "Invoice"),
        upsert("Billing is a service", "service", "Billing"),
    )


# a. No store: say how to make one.


def test_no_store_suggests_init_for_the_very_path(tmp_path: Path) -> None:
    missing = tmp_path / "no such store"
    out = run("status", "--store", str(missing))
    assert out.returncode == 3, out.stderr
    assert out.stdout == ""
    assert "no kgai store at" in out.stderr
    assert "pass --store PATH" in out.stderr
    command = f"kgai-tui init --store {shlex.quote(str(missing))}"
    assert f"create one there with `{command}`" in out.stderr
    assert out.stderr.count("\n") == 1  # one line
    # The suggestion works as written (its path quoted for the shell).
    made = run(*shlex.split(command)[1:])
    assert made.returncode == 0, made.stderr
    assert run("status", "--store", str(missing)).returncode == 0


def test_no_store_in_json_is_kgs_empty_answer_with_its_note(tmp_path: Path) -> None:
    """kg answers a read with nothing recorded as an empty answer and a note (exit
    0), saying where the store was looked for and why there; nothing on stderr."""
    out = run("status", "--store", "/nonexistent", "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert list(answer) == ["initialized", "note", "ok", "version"]
    assert answer["initialized"] is False and answer["ok"] is True
    assert answer["note"].startswith(
        "no knowledge graph store at /nonexistent, which is where --store says"
    )
    assert out.stderr == ""


# b. --store accepts the project directory.


def test_store_may_name_the_project_directory(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    store = make_store(project / ".kgai" / "store")
    written = run(
        "record",
        "--store",
        str(project),
        stdin=json.dumps(
            {"decision": upsert("Invoices are PDFs", "feature", "Invoice")}
        ),
    )
    assert written.returncode == 0, written.stderr
    assert not (project / "log").exists()
    assert len(list((store / "log").glob("*.ndjson"))) == 1

    status = run("status", "--store", str(project), "--json")
    assert status.returncode == 0, status.stderr
    obj = json.loads(status.stdout)
    assert Path(obj["root"]) == store
    assert obj["events"] == 1
    history = run("history", "feature:Invoice", "--store", str(project))
    assert history.returncode == 0, history.stderr
    assert "Invoices are PDFs" in history.stdout


def test_a_store_directory_still_wins_over_a_nested_project_store(
    tmp_path: Path,
) -> None:
    outer = make_store(tmp_path / "outer", upsert("Outer", "feature", "Outer"))
    make_store(outer / ".kgai" / "store", upsert("Inner", "feature", "Inner"))
    out = run("heads", "--store", str(outer))
    assert out.returncode == 0, out.stderr
    assert "feature:Outer" in out.stdout and "Inner" not in out.stdout


# c. conflicts --about: "none about X", not "none at all".


@pytest.fixture
def contested(tmp_path: Path) -> Path:
    """Two conflicts (feature:Checkout, service:Billing): two installs decided each
    element without seeing the other's decision, as after a sync."""
    first = make_store(
        tmp_path / "first",
        upsert("Checkout is one page", "feature", "Checkout"),
        upsert("Billing runs nightly", "service", "Billing"),
        upsert("Invoices are PDFs", "feature", "Invoice"),
    )
    second = make_store(
        tmp_path / "second",
        upsert("Checkout is a wizard", "feature", "Checkout"),
        upsert("Billing runs hourly", "service", "Billing"),
    )
    for shard in (second / "log").glob("*.ndjson"):
        (first / "log" / shard.name).write_bytes(shard.read_bytes())
    return first


def test_conflicts_about_a_topic_without_any(contested: Path) -> None:
    everything = run("conflicts", "--store", str(contested), "--json")
    assert everything.returncode == 0, everything.stderr
    assert json.loads(everything.stdout)["count"] == 2

    out = run("conflicts", "--about", "invoice", "--store", str(contested))
    assert out.returncode == 0, out.stderr
    assert "no conflicts about invoice" in out.stdout
    assert "every element has at most one decision in force" not in out.stdout


def test_conflicts_about_keeps_kgs_json_shape(contested: Path) -> None:
    out = run("conflicts", "--about", "invoice", "--store", str(contested), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"conflicts": None, "count": 0, "ok": True}


def test_conflicts_about_a_contested_topic_lists_it(contested: Path) -> None:
    out = run("conflicts", "--about", "checkout", "--store", str(contested))
    assert out.returncode == 0, out.stderr
    assert "feature:Checkout" in out.stdout and "service:Billing" not in out.stdout


def test_no_conflicts_at_all_still_says_so(invoices: Path) -> None:
    out = run("conflicts", "--store", str(invoices))
    assert out.returncode == 0, out.stderr
    assert "every element has at most one decision in force" in out.stdout


# d. A bad as-of moment: show what would parse.


def test_a_bad_moment_gives_valid_examples(invoices: Path) -> None:
    out = run("as-of", "2026-03-31T12:00", "--store", str(invoices))
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    assert 'invalid timestamp "2026-03-31T12:00"' in out.stderr
    assert "2026-03-31T12:00:00Z" in out.stderr  # RFC3339, zone Z
    assert "+02:00" in out.stderr  # RFC3339, a zone offset
    assert "a date (2026-03-31" in out.stderr and "end of that day" in out.stderr
    assert "did you mean 2026-03-31T12:00:00Z?" in out.stderr


def test_the_suggested_moment_is_valid(invoices: Path) -> None:
    out = run("as-of", "2026-03-31T12:00:00Z", "--store", str(invoices))
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize(
    ("moment", "meant"),
    [
        ("2026-03-31 12:00:00", "2026-03-31T12:00:00Z"),
        ("2026-03-31t12:00:00z", "2026-03-31T12:00:00Z"),
        ("2026-03-31T12:00+0200", "2026-03-31T12:00:00+02:00"),
        ("2026-3-1", "2026-03-01"),
    ],
)
def test_a_near_miss_moment_is_repaired(
    invoices: Path, moment: str, meant: str
) -> None:
    out = run("as-of", moment, "--store", str(invoices), "--json")
    assert out.returncode == 2, out.stderr
    assert error_of(out).endswith(f"did you mean {meant}?")


def test_a_word_is_not_repaired(invoices: Path) -> None:
    out = run("as-of", "yesterday", "--store", str(invoices))
    assert out.returncode == 2, out.stderr
    assert "2026-03-31T12:00:00Z" in out.stderr and "did you mean" not in out.stderr


# e. history of a missing element names the ones that exist.


def test_history_of_a_bare_name_names_the_element(invoices: Path) -> None:
    out = run("history", "Invoice", "--store", str(invoices))
    assert out.returncode == 1, out.stderr
    assert out.stdout == ""
    assert 'no decisions touch "Invoice"' in out.stderr
    assert "did you mean feature:Invoice?" in out.stderr


def test_history_of_a_typo_suggests_the_close_element(invoices: Path) -> None:
    out = run("history", "feature:Invoce", "--store", str(invoices))
    assert out.returncode == 1, out.stderr
    assert 'no decisions touch "feature:Invoce"' in out.stderr
    assert "did you mean feature:Invoice?" in out.stderr


def test_history_suggestions_in_json(invoices: Path) -> None:
    out = run("history", "feature:Invoce", "--store", str(invoices), "--json")
    assert out.returncode == 1, out.stderr
    assert error_of(out).endswith("did you mean feature:Invoice?")


def test_history_suggestions_come_in_a_fixed_order(tmp_path: Path) -> None:
    """Same name under other kinds first (sorted), then the closest names."""
    store = make_store(
        tmp_path / "store",
        upsert("Invoices render", "service", "Invoice"),
        upsert("Invoices are PDFs", "feature", "Invoice"),
        upsert("Invoices go out monthly", "feature", "Invoices"),
        upsert("Billing is a service", "service", "Billing"),
    )
    out = run("history", "Invoice", "--store", str(store))
    assert out.returncode == 1, out.stderr
    assert (
        "did you mean feature:Invoice or service:Invoice or feature:Invoices?"
        in out.stderr
    )


def test_history_without_a_close_element_suggests_nothing(invoices: Path) -> None:
    out = run("history", "feature:Zebra", "--store", str(invoices))
    assert out.returncode == 1, out.stderr
    assert 'no decisions touch "feature:Zebra"' in out.stderr
    assert "did you mean" not in out.stderr


def test_heads_of_a_typo_suggests_the_close_element(invoices: Path) -> None:
    out = run("heads", "feature:Invoce", "--store", str(invoices))
    assert out.returncode == 1, out.stderr
    assert "did you mean feature:Invoice?" in out.stderr
