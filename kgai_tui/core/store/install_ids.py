"""The one rule for what an install id may look like, checked wherever one is read.

An install id names a shard file (``log/<id>.ndjson``), so an id taken from a config
file, a remote or an argument must never be able to name a path outside ``log/``.
The reference mints ``i`` + 16 lowercase hex digits; its benchmark generator writes
``igen`` + 12 digits and its own test vectors use names such as ``i-ana``. The rule
below admits all three and nothing that could leave a directory or hide in a
terminal: a leading ``i``, then 1 to 63 of ``[0-9a-z-]``.
"""

from __future__ import annotations

import re
from typing import Final

from kgai_tui.core.errors import ConfigError

__all__ = ["INSTALL_ID_SHAPE", "check_install_id", "is_install_id", "shard_install_id"]

#: Human description used in error messages and docs.
INSTALL_ID_SHAPE: Final = (
    "'i' followed by 1-63 of 0-9, a-z and '-' (e.g. ib7b4a6de081e4d20)"
)

_INSTALL_ID: Final = re.compile(r"i[0-9a-z-]{1,63}")


def is_install_id(value: object) -> bool:
    """Whether ``value`` is a string of the install-id shape."""
    return isinstance(value, str) and _INSTALL_ID.fullmatch(value) is not None


def check_install_id(value: str, where: str) -> str:
    """Return ``value`` when it is an install id; otherwise refuse it.

    Raises:
        ConfigError: one line naming ``where`` the id came from and the shape wanted.
    """
    if is_install_id(value):
        return value
    shown = value.encode("unicode_escape").decode("ascii")[:80]
    raise ConfigError(
        f"{where}: install id {shown!r} is not valid (want {INSTALL_ID_SHAPE})"
    )


def shard_install_id(name: str) -> str | None:
    """The install id a shard file name ``<id>.ndjson`` names, or ``None``."""
    if not name.endswith(".ndjson"):
        return None
    stem = name[: -len(".ndjson")]
    return stem if is_install_id(stem) else None
