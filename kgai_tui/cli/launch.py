"""The ``kgai-tui`` executable's entry point: answer ``--version`` before importing click.

Scripts and agents probe a tool with ``--version`` to learn whether it is installed;
that answer needs nothing but the version string, so it is printed here, with the
exact bytes click's ``version_option`` prints, and the process ends. Everything else
goes to :func:`kgai_tui.cli.main.entry`.
"""

from __future__ import annotations

import os
import sys

#: The whole argument lists that only ask for the version (kg's ``version`` too).
#: (No ``typing.Final`` here: importing typing alone costs ~15 ms of this answer.)
VERSION_ARGS: tuple[list[str], ...] = (["--version"], ["-V"], ["version"])


def entry() -> None:
    """Run ``kgai-tui``: the version at once, any other command through click."""
    if sys.argv[1:] in VERSION_ARGS:
        from kgai_tui import __version__

        code = 0
        try:
            sys.stdout.write(f"kgai-tui, version {__version__}\n")
            sys.stdout.flush()
        except OSError:  # a closed pipe: the same exit click's echo would give
            code = 1
        os._exit(code)
    from kgai_tui.cli.main import entry as run

    run()
