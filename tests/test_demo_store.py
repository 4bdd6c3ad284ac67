"""The bundled demo store: one copy in assets/, package data, the story's build (issue 18).

A wheel ships only what pyproject's package-data names, so every file of the store
must match one of its patterns (a glob skips dot files). The wheel itself is built and
installed into a fresh venv by ``.ci/run``, not here (too slow for the suite).
"""

from __future__ import annotations

import filecmp
import tomllib
from pathlib import Path, PurePosixPath

from kgai_tui.demo import DEMO_STORE, build, open_copy

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kgai_tui"


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()
    )


def test_the_demo_store_is_package_data() -> None:
    assert DEMO_STORE == PACKAGE / "demo_store"
    # One copy in git, in assets/; the package holds a symlink a wheel build follows.
    assert DEMO_STORE.is_symlink()
    assert DEMO_STORE.resolve() == ROOT / "assets" / "demo-store"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["kgai_tui"]
    files = _files(DEMO_STORE)
    assert "kg.config.json" in files and any(f.startswith("log/") for f in files)
    for name in files:
        path = PurePosixPath("demo_store") / name
        shipped = [
            p for p in patterns if path.match(p) and not path.name.startswith(".")
        ]
        shipped += [p for p in patterns if p == str(path)]
        assert shipped, f"demo_store/{name} is in no package-data pattern"


def test_the_committed_store_is_the_story_s_build(tmp_path: Path) -> None:
    rebuilt = build(tmp_path / "demo")
    assert _files(rebuilt) == _files(DEMO_STORE)
    for name in _files(DEMO_STORE):
        assert filecmp.cmp(rebuilt / name, DEMO_STORE / name, shallow=False), name


def test_open_copy_copies_the_whole_store() -> None:
    copy = open_copy()
    assert _files(copy) == _files(DEMO_STORE)
