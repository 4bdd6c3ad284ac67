"""The ``--map`` file of ``import adr``: which domain elements each ADR decides.

JSON or TOML (by extension ``.toml``), one entry per ADR::

    {"0007": ["service:Billing", "feature:Invoice"], "ADR-0011": "infra:Postgres"}

Keys name an ADR by number (``7``, ``0007``, ``ADR-0007``, ``adr-7``); values are one
``kind:name`` reference or a list of them.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gotext import go_trim_space

_KEY: Final = re.compile(r"(?:adr[-_ ]?)?0*(\d{1,9})\Z", re.IGNORECASE)


def _load(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read map file {path}: {exc.strerror or exc}") from exc
    try:
        if path.suffix.lower() == ".toml":
            return tomllib.loads(data.decode("utf-8"))
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise UsageError(f"map file {path} is not valid {kind}: {exc}") from exc


def parse_adr_map(raw: Any, source: str = "map") -> dict[int, tuple[str, ...]]:
    """Validate a decoded map: ADR number to element references.

    Raises:
        UsageError: not an object, a key that names no ADR, a value that is not a
            reference or a list of references.
    """
    if not isinstance(raw, dict):
        raise UsageError(f"{source}: expected an object of ADR number -> elements")
    out: dict[int, tuple[str, ...]] = {}
    for key, value in raw.items():
        m = _KEY.match(go_trim_space(str(key)))
        if m is None:
            raise UsageError(f'{source}: {key!r} names no ADR (use e.g. "0007")')
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise UsageError(f"{source}: {key!r} must map to kind:name strings")
        refs = tuple(r for r in (go_trim_space(i) for i in items) if r)
        number = int(m.group(1))
        out[number] = tuple(dict.fromkeys(out.get(number, ()) + refs))
    return out


def load_adr_map(path: Path) -> dict[int, tuple[str, ...]]:
    """Read and validate a map file (``.toml`` is TOML, anything else JSON).

    Raises:
        UsageError: the file cannot be read or is not a valid map.
    """
    return parse_adr_map(_load(path), str(path))
