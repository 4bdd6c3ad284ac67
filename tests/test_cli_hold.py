"""A command keeps the store it opened until the process ends.

``kgai-tui`` leaves through ``os._exit`` so that a million decisions are never
freed object by object; an engine dropped when its answer returns would still be
freed that way, before the answer is printed (2.1 s of a 1M first answer). These
run the commands in process, where the freeing would be visible, and check that
the holding is bounded: the next invocations let the older engines go.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from benchmarks.genlog import GenParams, write_store
from kgai_tui.cli import main as cli
from kgai_tui.core.engine import open as engine_open
from kgai_tui.core.model import open as model_open


def _spy(
    monkeypatch: pytest.MonkeyPatch, module: Any, name: str
) -> list[weakref.ref[Any]]:
    seen: list[weakref.ref[Any]] = []
    real: Callable[..., Any] = getattr(module, name)

    def opened(*args: Any, **kwargs: Any) -> Any:
        got = real(*args, **kwargs)
        seen.append(weakref.ref(got))
        return got

    monkeypatch.setattr(module, name, opened)
    return seen


def _status(store: Path) -> None:
    result = CliRunner().invoke(cli.main, ["status", "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("model", ["on", "off"])
def test_the_engine_a_read_opened_outlives_its_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    store = tmp_path / "s"
    write_store(store, GenParams(300, 2, 12))
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", model)
    if model == "on":  # the first read answers from the whole replay
        seen = _spy(monkeypatch, model_open, "open_model")
    else:
        seen = _spy(monkeypatch, engine_open, "open_engine")
    _status(store)
    gc.collect()
    assert len(seen) == 1
    assert seen[0]() is not None, "the engine was freed when the answer returned"
    _status(store)
    _status(store)
    gc.collect()
    assert seen[0]() is None, "every engine ever opened is kept"
