"""Where the model's recall files live and whether they are as the model says.

Kept apart from :mod:`recall_store` so that checking a model on open (every read)
does not import NumPy.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgai_tui.core.model.rows import ModelCorruptError

__all__ = ["check_recall", "file_identity", "listed", "recall_dir", "remove_unlisted"]


def recall_dir(model: Path) -> Path:
    """The directory of a model's recall files."""
    return model.with_name(model.name + ".recall")


def file_identity(path: Path) -> list[int]:
    st = os.stat(path, follow_symlinks=False)
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


# ---------------------------------------------------------------------- fields


def check_recall(model: Path, recall: dict[str, Any]) -> None:
    """Every recall file is there and unchanged (stat only: no bytes read)."""
    for entry in _entries(recall):
        try:
            same = (
                file_identity(recall_dir(model) / str(entry["file"]))
                == entry["identity"]
            )
        except OSError:
            same = False
        if not same:
            raise ModelCorruptError(
                f"recall file {entry['file']} is missing or changed"
            )


def listed(recall: dict[str, Any]) -> set[str]:
    """The file names a ``recall`` entry uses."""
    return {str(e["file"]) for e in _entries(recall)}


def _entries(recall: dict[str, Any]) -> list[dict[str, Any]]:
    """The meta entries of a ``recall`` entry's files: the element file, its delta
    file (when there is one) and the segments."""
    delta = recall.get("delta_file")
    return [
        recall["elements"],
        *([] if delta is None else [delta]),
        *recall["segments"],
    ]


def remove_unlisted(model: Path, keep: Sequence[str]) -> None:
    """Delete recall files no model state names any more (under the model lock).

    A reader still holding one mapped keeps its pages; one about to open it finds
    it gone and reopens the model.
    """
    folder = recall_dir(model)
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name not in keep:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
