"""The bundled demo store: how it is built from ``assets/demo/story.json``, and opened.

The story is a list of decisions, each by one of four writers at a given moment. Every
writer has a store of its own, and before a decision it "syncs" (copies the other
writers' shards) unless the entry says ``"sync_before": false``: that is how two
people decide the same thing without seeing each other, which is what a real
conflict is. The result is built through the real write path (``record``), so
every line is one the reference engine accepts, and byte-identical on every build.

The built store's one copy in git is ``assets/demo-store``; ``kgai_tui/demo_store`` is
a symlink to it, which a wheel build follows, so the store is package data and is
found at the same path in a checkout, an editable install and an installed wheel. The
story it is built from lives in the checkout only (``assets/demo/story.json``).

Usage: ``python -m kgai_tui.demo build [OUT]`` rebuilds ``assets/demo-store``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

ASSETS: Final = Path(__file__).resolve().parent.parent / "assets"  # checkout only
STORY: Final = ASSETS / "demo" / "story.json"
# Package data (pyproject's package-data), next to this module in every install; in a
# checkout, a symlink to assets/demo-store.
DEMO_STORE: Final = Path(__file__).resolve().parent / "demo_store"
# Where a rebuild writes: the real directory behind the symlink (rmtree refuses links).
BUILD_TARGET: Final = DEMO_STORE.resolve()
VIEWER: Final = {"install_id": "i0de0000000000001", "actor": "you"}
MACHINE: Final = "kgai-tui-demo"


def _write_config(root: Path, install_id: str, actor: str, *, bind: bool) -> None:
    """Write a config; ``bind`` pins it to the build's fixed machine fingerprint.

    The shipped viewer config is unbound, so the first write on a user's machine
    adopts that machine instead of rotating to a fresh install id.
    """
    from kgai_tui.core.store.config_file import (
        StoreConfig,
        machine_fingerprint,
        save_config,
    )

    machine = ""
    if bind:
        os.environ["KGAI_MACHINE"] = MACHINE
        machine = machine_fingerprint()
    save_config(root, StoreConfig(install_id=install_id, actor=actor, machine=machine))


def _sync(into: Path, stores: dict[str, Path], writers: dict[str, Any]) -> None:
    """Copy every other writer's own shard into ``into`` (what a sync delivers)."""
    for name, other in stores.items():
        shard_name = writers[name]["install_id"] + ".ndjson"
        source = other / "log" / shard_name
        if other != into and source.exists():
            shutil.copyfile(source, into / "log" / shard_name)


def build(out: Path = BUILD_TARGET, story_path: Path = STORY) -> Path:
    """Build the demo store at ``out`` from the story, replacing what was there."""
    from kgai_tui.core.write.writes import init_store, record

    story = json.loads(story_path.read_text("utf-8"))
    writers: dict[str, Any] = story["writers"]
    saved_env = {k: os.environ.get(k) for k in ("KGAI_TUI_NOW", "KGAI_MACHINE")}
    with tempfile.TemporaryDirectory(prefix="kgai-demo-build-") as tmp:
        stores: dict[str, Path] = {}
        try:
            for name, who in writers.items():
                root = Path(tmp) / name
                (root / "log").mkdir(parents=True)
                _write_config(root, who["install_id"], who["actor"], bind=True)
                init_store(root)
                stores[name] = root
            for entry in story["entries"]:
                root = stores[entry["writer"]]
                if entry.get("sync_before", True):
                    _sync(root, stores, writers)
                os.environ["KGAI_TUI_NOW"] = entry["at"]
                record(root, json.dumps({"decision": entry["decision"]}))
        finally:
            for key, value in saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        if out.exists():
            shutil.rmtree(out)
        (out / "log").mkdir(parents=True)
        for name, who in writers.items():
            shard = who["install_id"] + ".ndjson"
            shutil.copyfile(stores[name] / "log" / shard, out / "log" / shard)
        for scaffold in (".gitignore", ".gitattributes"):
            shutil.copyfile(stores[next(iter(stores))] / scaffold, out / scaffold)
    _write_config(out, VIEWER["install_id"], VIEWER["actor"], bind=False)
    return out


def open_copy() -> Path:
    """Copy the demo store to a fresh temporary directory and return its path.

    The app writes (resolving a conflict) into the copy, never into the install.
    """
    if not (DEMO_STORE / "log").is_dir():
        raise FileNotFoundError(f"the demo store is missing at {DEMO_STORE}")
    target = Path(tempfile.mkdtemp(prefix="kgai-tui-demo-")) / "store"
    shutil.copytree(DEMO_STORE, target)
    os.chmod(target / "kg.config.json", 0o600)
    return target


def main(argv: list[str]) -> int:
    """``python -m kgai_tui.demo build [OUT]``."""
    if len(argv) < 1 or argv[0] != "build":
        print("usage: python -m kgai_tui.demo build [OUT]", file=sys.stderr)
        return 2
    out = Path(argv[1]) if len(argv) > 1 else BUILD_TARGET
    built = build(out)
    print(f"built the demo store at {built}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
