"""kg 1.5's layered settings, approvals and store resolution (issue 41).

Real git repositories, real ``.kgairc`` files and a temporary ``$KGAI_HOME``;
the approval fingerprints and the approvals file are checked against what the
reference's own Go code computed and wrote (tests/fixtures/trust).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgai_tui.core.errors import ConfigError, UsageError
from kgai_tui.core.store.discovery import locate_store
from kgai_tui.core.store.settings import (
    Settings,
    expand_store_path,
    validate_layer_key,
    write_layer,
)
from kgai_tui.core.store.trust import (
    _load,
    _save,
    dismiss,
    fingerprint,
    trust,
    trust_path,
    trust_state,
    untrust,
)
from kgai_tui.core.write.writes import init_store

FIXTURES = Path(__file__).parent / "fixtures" / "trust"
KGAI = [sys.executable, "-m", "kgai_tui"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """KGAI_HOME in the suite's fresh HOME (no store or project comes from the
    environment: conftest clears them)."""
    monkeypatch.setenv("KGAI_HOME", str(tmp_path / "home" / ".kgai"))
    return tmp_path / "home"  # the suite's isolated HOME (conftest)


@pytest.fixture
def repo(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A git repository, the working directory."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    monkeypatch.chdir(root)
    yield root


def _rc(repo: Path, **values: str) -> Path:
    path = repo / ".kgairc"
    path.write_text(json.dumps(values), "utf-8")
    return path


def _cli(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*KGAI, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        check=False,
    )


# ------------------------------------------------------------------ the reference's bytes


def test_fingerprints_equal_the_reference_engines() -> None:
    """HTML characters, quotes, non-ASCII, U+2028, controls: Go's escaping hashed."""
    lines = (FIXTURES / "go-fingerprints.ndjson").read_text("utf-8").splitlines()
    assert len(lines) >= 10
    for line in lines:
        case = json.loads(line)
        settings = Settings(prompt=case["prompt"], store=case["store"])
        assert fingerprint(settings) == case["fingerprint"], case


def test_kgs_approvals_file_counts_here_and_ours_is_its_bytes(
    tmp_path: Path, home: Path
) -> None:
    """An approval made by ``kg trust`` (and a dismissal by ``kg trust --dismiss``)
    decides here; the same configuration in other bytes inherits it; rewriting
    the file gives kg's bytes back."""
    base = tmp_path / "gt"
    for name in "abc":
        (base / f"repo-{name}").mkdir(parents=True)
        raw = (FIXTURES / f"kgairc-{name}.json").read_bytes()
        (base / f"repo-{name}" / ".kgairc").write_bytes(raw)
    kg_file = (
        (FIXTURES / "kg-trusted.json").read_text("utf-8").replace("/tmp/gt", str(base))
    )
    trust_path().parent.mkdir(parents=True)
    trust_path().write_text(kg_file, "utf-8")
    a = trust_state(base / "repo-a" / ".kgairc")
    b = trust_state(base / "repo-b" / ".kgairc")
    c = trust_state(base / "repo-c" / ".kgairc")
    assert a.trusted and not a.inherited_from
    assert b.trusted and b.inherited_from == str(base / "repo-a" / ".kgairc")
    assert c.dismissed and not c.trusted and not c.pending
    _save(_load())
    assert trust_path().read_text("utf-8") == kg_file


# ------------------------------------------------------------------ layers


def test_each_key_only_in_its_layers_on_write_and_read(repo: Path, home: Path) -> None:
    """kg's refusals on write; a committed remote or cloud_url is ignored on read."""
    validate_layer_key("project", "store")
    validate_layer_key("global", "remote")
    for layer, key, words in (
        ("session", "store", "cannot be set in the session layer"),
        ("project", "remote", "syncing belongs to the store"),
        ("global", "cloud_url", "install-local"),
    ):
        with pytest.raises(UsageError, match=words):
            validate_layer_key(layer, key)
    with pytest.raises(UsageError, match="unknown setting"):
        validate_layer_key("global", "stor")
    _rc(repo, remote="s3://evil/x", cloud_url="https://evil", prompt="rules", stor="x")
    trust(repo / ".kgairc")
    show = json.loads(_cli(repo, "config").stdout)
    project = show["layers"][1]
    assert project["settings"] == {"prompt": "rules"}
    assert project["ignored_keys"] == ["remote", "cloud_url"]
    assert project["unknown_keys"] == ["stor"]
    assert show["effective"]["remote"] == "" and show["sources"]["prompt"] == "project"


def test_write_layer_keeps_other_keys_and_deletes_cleared_ones(tmp_path: Path) -> None:
    """A _comment and a newer version's key survive; unset removes the key."""
    path = tmp_path / "config.json"
    path.write_text('{"_comment": "team", "future": [1, 2], "remote": "s3://a/b"}')
    write_layer(path, "prompt", "be brief")
    write_layer(path, "remote", "")
    data = json.loads(path.read_text())
    assert data == {"_comment": "team", "future": [1, 2], "prompt": "be brief"}
    assert path.read_text().startswith('{\n  "_comment": "team",')


@pytest.mark.parametrize(
    ("value", "env", "words"),
    [
        ("${KGAI_NOT_SET_ANYWHERE}/kg", {}, "is not set on this machine"),
        ("~", {}, "resolves to your home directory"),
        (".", {}, "resolves to the repository root"),
        ("busy", {}, "already contains other files"),
        ("", {}, "empty value"),
    ],
)
def test_store_values_kg_refuses(
    repo: Path, value: str, env: dict[str, str], words: str
) -> None:
    """Each refusal is a one-line ConfigError, never a fallback to the default."""
    (repo / "busy").mkdir()
    (repo / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match=words):
        expand_store_path(value, repo)


def test_store_values_expand_as_kg_expands_them(repo: Path, home: Path) -> None:
    """${VAR}, ~ and a path relative to the repository root."""
    os.environ["KGAI_TEAM"] = "team"
    try:
        assert expand_store_path("${HOME}/kgai", repo) == home / "kgai"
        assert expand_store_path("~/kg/$KGAI_TEAM", repo) == home / "kg" / "team"
        assert expand_store_path("../shared-kg", repo) == repo.parent / "shared-kg"
    finally:
        del os.environ["KGAI_TEAM"]


def test_a_corrupt_kgairc_is_loud_everywhere(repo: Path) -> None:
    """Reading with a corrupt .kgairc fails with one line (exit 1), never the default."""
    (repo / ".kgairc").write_text('{"store": ')
    with pytest.raises(ConfigError, match="corrupt"):
        locate_store(None)
    done = _cli(repo, "status", "--text")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "corrupt" in done.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_kgairc_that_is_no_regular_file_is_one_line_not_a_hang(
    repo: Path, target: str
) -> None:
    """git keeps symlinks: a committed .kgairc pointing at /dev/zero or a FIFO must
    neither exhaust memory nor block; it is refused like a corrupt one."""
    if target == "fifo":
        os.mkfifo(repo / "pipe")
        target = str(repo / "pipe")
    (repo / ".kgairc").symlink_to(target)
    done = subprocess.run(
        [*KGAI, "status", "--text"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "not a regular file" in done.stderr


# ------------------------------------------------------------------ resolution


def test_resolution_follows_kgs_order(repo: Path, home: Path, tmp_path: Path) -> None:
    """--store, KGAI_STORE, an approved .kgairc, the global store, the default; a
    pending, dismissed or revoked .kgairc decides nothing."""
    shared, glob = tmp_path / "shared", tmp_path / "global-store"
    default = repo / ".kgai" / "store"
    assert locate_store(None).root == default
    (home / ".kgai").mkdir()
    (home / ".kgai" / "config.json").write_text(json.dumps({"store": str(glob)}))
    assert (locate_store(None).root, locate_store(None).source) == (glob, "global")
    rc = _rc(repo, store=str(shared))
    assert locate_store(None).root == glob  # pending: nothing
    dismiss(rc)
    assert locate_store(None).root == glob  # dismissed: nothing
    trust(rc)
    assert (locate_store(None).root, locate_store(None).source) == (shared, "project")
    os.environ["KGAI_STORE"] = str(tmp_path / "env")
    try:
        assert locate_store(None).root == tmp_path / "env"
        assert locate_store(str(tmp_path / "flag")).root == tmp_path / "flag"
    finally:
        del os.environ["KGAI_STORE"]
    rc.write_text(json.dumps({"store": str(shared), "prompt": "changed"}))
    assert locate_store(None).root == glob  # a change asks again
    trust(rc)
    untrust(rc)
    assert locate_store(None).root == glob  # revoked


def test_a_linked_worktree_reads_the_main_worktrees_kgairc(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kg anchors .kgairc at the main worktree: a branch's copy decides nothing."""
    shared = tmp_path / "shared"
    rc = _rc(repo, store=str(shared))
    trust(rc)
    _git(repo, "add", ".kgairc")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "rc")
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    (tmp_path / "wt" / ".kgairc").write_text(json.dumps({"store": "/elsewhere"}))
    monkeypatch.chdir(tmp_path / "wt")
    assert locate_store(None).root == shared


# ------------------------------------------------------------------ the recipe


def test_the_shared_store_recipe_end_to_end(tmp_path: Path, home: Path) -> None:
    """kg's recipe: config set --project store '${HOME}/kgai', trust, in two repos
    carrying the same .kgairc: each sees the other's decisions."""
    a, b = tmp_path / "shop-api", tmp_path / "shop-web"
    for repo in (a, b):
        repo.mkdir()
        _git(repo, "init", "-q")
    done = _cli(a, "config", "set", "--project", "store", "${HOME}/kgai")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pending_approval"] == str(a / ".kgairc")
    (b / ".kgairc").write_bytes((a / ".kgairc").read_bytes())
    refused = _cli(a, "init")
    assert refused.returncode == 1 and "no local store is created" in refused.stderr
    for read in (("status", "--text"), ("history", "feature:Invoice", "--text")):
        waiting = _cli(a, *read)  # the advice is approval, never a local store
        assert waiting.returncode == 3, waiting
        assert "`kgai-tui trust` approves it" in waiting.stderr
        assert "kgai-tui init" not in waiting.stderr
    assert not (a / ".kgai").exists()
    approved = json.loads(_cli(a, "trust").stdout)
    assert approved["approved"] is True
    assert approved["asks_for"]["store"]["resolves_to"] == str(home / "kgai")
    assert _cli(a, "init", "--actor", "ana").returncode == 0
    decision = {
        "decision": {
            "title": "Invoices are rendered with Typst",
            "mutations": [
                {"op": "upsert_element", "kind": "feature", "name": "Invoice"}
            ],
        }
    }
    recorded = _cli(a, "record", "-", stdin=json.dumps(decision))
    assert recorded.returncode == 0, recorded.stderr
    state_b = json.loads(_cli(b, "config").stdout)
    assert state_b["approval_inherited_from"] == str(a / ".kgairc")
    assert state_b["store_root"] == str(home / "kgai")
    history = json.loads(_cli(b, "history", "feature:Invoice").stdout)
    assert [d["title"] for d in history["decisions"]] == [
        "Invoices are rendered with Typst"
    ]
    assert not (a / ".kgai").exists() and not (b / ".kgai").exists()


def test_approving_says_where_earlier_decisions_are(tmp_path: Path, home: Path) -> None:
    """Decisions recorded in the local store before approval are not lost: the
    approval names the previous store and how to carry them over."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    init_store(repo / ".kgai" / "store", "ana")
    decision = {
        "decision": {
            "title": "Early",
            "mutations": [{"op": "upsert_element", "kind": "feature", "name": "A"}],
        }
    }
    assert _cli(repo, "record", "-", stdin=json.dumps(decision)).returncode == 0
    _rc(repo, store=str(tmp_path / "shared"))
    out = json.loads(_cli(repo, "trust").stdout)
    assert out["previous_store"] == str(repo / ".kgai" / "store")
    assert "copy its log/*.ndjson into" in out["note"]


def test_mcp_started_in_a_repo_with_an_approved_kgairc(
    tmp_path: Path, home: Path
) -> None:
    """An agent's MCP server finds the shared store the .kgairc names."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _rc(repo, store="${HOME}/kgai")
    assert _cli(repo, "trust").returncode == 0
    assert _cli(repo, "init", "--actor", "ana").returncode == 0
    from kgai_tui.mcp.store import LiveStore

    cwd = Path.cwd()
    os.chdir(repo)  # where an agent starts it: its working directory
    try:
        live = LiveStore(None)
        assert live.root == home / "kgai" and live.location.source == "project"
        assert live.model().projection.applied_count == 0
    finally:
        os.chdir(cwd)


# ------------------------------------------------------------------ kg's other commands


def test_version_rotate_rebuild_and_no_store_answers(
    tmp_path: Path, home: Path
) -> None:
    """version --json is kg's shape; rotate retires the id; rebuild rebuilds; a read
    with no store answers ok with kg's note in JSON (exit 0), text keeps exit 3."""
    version = json.loads(_cli(tmp_path, "version", "--json").stdout)
    assert list(version) == ["name", "ok", "schema_version", "version"]
    store = tmp_path / "store"
    init_store(store, "ana")
    before = json.loads((store / "kg.config.json").read_text())
    rotated = json.loads(_cli(tmp_path, "rotate", "--store", str(store)).stdout)
    after = json.loads((store / "kg.config.json").read_text())
    assert rotated["old_install"] == before["install_id"] != after["install_id"]
    assert after["retired_installs"] == [before["install_id"]]
    rebuilt = json.loads(_cli(tmp_path, "rebuild", "--store", str(store)).stdout)
    assert rebuilt == {"applied": 0, "ok": True}
    missing = tmp_path / "nowhere"
    answer = _cli(tmp_path, "history", "feature:X", "--store", str(missing))
    assert answer.returncode == 0
    assert json.loads(answer.stdout) == {
        "decisions": [],
        "note": json.loads(answer.stdout)["note"],
        "ok": True,
    }
    assert "where --store says" in json.loads(answer.stdout)["note"]
    text = _cli(tmp_path, "history", "feature:X", "--store", str(missing), "--text")
    assert text.returncode == 3 and "kgai-tui init" in text.stderr


def test_piped_output_is_json_and_a_terminal_gets_text(tmp_path: Path) -> None:
    """kg's convention: JSON when stdout is not a terminal; text on a pty."""
    import pty

    store = tmp_path / "store"
    init_store(store, "ana")
    piped = _cli(tmp_path, "status", "--store", str(store))
    assert json.loads(piped.stdout)["ok"] is True
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(
            [*KGAI, "status", "--store", str(store)],
            stdout=slave,
            stderr=subprocess.PIPE,
            check=False,
            timeout=60,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    text = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert text.startswith("root: ") and "{" not in text


def test_sync_auto_is_silent_without_a_remote_and_respects_the_cooldown(
    tmp_path: Path, home: Path
) -> None:
    """No remote: nothing printed, nothing written. A bare git remote: it syncs
    once, stamps the attempt, records the result, then skips within the cooldown."""
    store = tmp_path / "store"
    init_store(store, "ana")
    quiet = _cli(tmp_path, "sync", "--auto", "--store", str(store))
    assert (quiet.returncode, quiet.stdout) == (0, "")
    assert not (store / ".autosync-stamp").exists()
    bare = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(bare))
    assert _cli(tmp_path, "remote", str(bare), "--store", str(store)).returncode == 0
    ran = _cli(tmp_path, "sync", "--auto", "--store", str(store))
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["ok"] is True
    last = json.loads((store / "last-autosync.json").read_text())
    assert last["ok"] is True and last["remote"] == str(bare)
    assert (store / ".autosync-stamp").exists()
    again = _cli(tmp_path, "sync", "--auto", "--store", str(store))
    assert (again.returncode, again.stdout) == (0, "")
