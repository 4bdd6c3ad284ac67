"""The explorer's remembered choices (its theme), kept in the user's config directory.

One small JSON object, ``explorer.json`` in ``platformdirs.user_config_dir("kgai-tui")``;
never inside a store. A missing, unreadable or corrupt file reads as no choices, and
saving keeps any other keys the file holds.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Final

import platformdirs

FILE_NAME: Final = "explorer.json"
_MAX_BYTES: Final = 64 * 1024


def config_dir() -> Path:
    """The directory of the explorer's preferences (tests point it elsewhere)."""
    return Path(platformdirs.user_config_dir("kgai-tui"))


def preferences_path() -> Path:
    """The preferences file."""
    return config_dir() / FILE_NAME


def load_preferences() -> dict[str, Any]:
    """The saved preferences; ``{}`` when the file is missing, unreadable or corrupt."""
    try:
        with preferences_path().open("rb") as fh:
            raw = fh.read(_MAX_BYTES + 1)
    except OSError:
        return {}
    if len(raw) > _MAX_BYTES:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:  # includes UnicodeDecodeError
        return {}
    return data if isinstance(data, dict) else {}


def saved_theme() -> str | None:
    """The theme chosen last time, if any."""
    theme = load_preferences().get("theme")
    return theme if isinstance(theme, str) and theme else None


def save_theme(name: str) -> None:
    """Remember ``name`` as the theme (an atomic rewrite of the file).

    Raises:
        OSError: the directory or file could not be written.
    """
    prefs = load_preferences()
    if prefs.get("theme") == name:
        return
    prefs["theme"] = name
    path = preferences_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(prefs, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
