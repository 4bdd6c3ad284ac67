"""`kgai-tui` with no command opens the explorer, whatever its first option.

``kgai-tui``, ``kgai-tui STORE``, ``kgai-tui --demo`` and ``kgai-tui --store PATH``
all mean ``kgai-tui open ...``; only ``--help`` and ``--version`` belong to the group.
The explorer itself is replaced by a recorder here (it is run for real in
``tests/ui``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.genlog import GenParams, write_store
from kgai_tui import __version__
from kgai_tui.cli import main as cli
from kgai_tui.ui import app as app_module


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str]]:
    seen: list[tuple[Path, str]] = []

    class Recorder:
        def run(self) -> None:
            return None

    def make_app(root: Path, label: str = "", live: bool = True) -> Recorder:
        seen.append((Path(root), label))
        return Recorder()

    monkeypatch.setattr(app_module, "make_app", make_app)
    # CliRunner is no terminal; the refusal without one is in test_cli_forgiving.
    monkeypatch.setattr(cli, "_has_terminal", lambda: True)
    return seen


def test_demo_flag_alone_opens_the_demo(opened: list[tuple[Path, str]]) -> None:
    result = CliRunner().invoke(cli.main, ["--demo"])
    assert result.exit_code == 0, result.output
    assert opened and opened[0][1] == "demo store (a temporary copy)"
    assert (opened[0][0] / "log").is_dir()


def test_store_option_alone_opens_that_store(
    opened: list[tuple[Path, str]], tmp_path: Path
) -> None:
    write_store(tmp_path / "s", GenParams(20, 2, 5))
    result = CliRunner().invoke(cli.main, ["--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert opened == [(tmp_path / "s", str(tmp_path / "s"))]


def test_group_flags_and_unknown_options(opened: list[tuple[Path, str]]) -> None:
    runner = CliRunner()
    version = runner.invoke(cli.main, ["--version"])
    assert version.exit_code == 0 and __version__ in version.output
    assert runner.invoke(cli.main, ["--help"]).exit_code == 0
    bogus = runner.invoke(cli.main, ["--bogus"])
    assert bogus.exit_code == 2 and "--bogus" in bogus.output
    assert opened == []
