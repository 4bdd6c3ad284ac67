"""Allow ``python -m kgai_tui``."""

from __future__ import annotations

from kgai_tui.cli.launch import entry

if __name__ == "__main__":
    entry()
