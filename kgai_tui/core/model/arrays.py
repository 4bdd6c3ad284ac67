"""A file of named NumPy arrays plus plain values, read back as views of a mapping.

The recall index of the model lives in such files beside the SQLite file: a query
maps the file and touches only the pages of the postings it reads, instead of
loading the whole index. Layout: a magic line, an 8-byte header length, a
:mod:`marshal` header ``{"values": ..., "arrays": {name: (dtype, shape, offset)}}``,
then each array's bytes at its (64-byte aligned) offset.
"""

from __future__ import annotations

import marshal
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.store.regular_file import (
    RegularFile,
    open_regular,
    replace_cache_file,
)

if TYPE_CHECKING:
    # NumPy loads with the first array read or written: an update that only
    # needs a file's values (the element ids) imports none (~0.07 s).
    import numpy.typing as npt

__all__ = ["read_arrays", "read_values", "write_arrays"]

_MAGIC: Final = b"kgai-tui arrays 1\n"
_ALIGN: Final = 64


class ArrayFileError(ValueError):
    """The file is not a whole array file of this format."""


def write_arrays(path: Path, values: Any, arrays: dict[str, npt.NDArray[Any]]) -> None:
    """Write ``values`` and ``arrays`` to ``path`` atomically (temporary file, rename)."""
    import numpy as np

    layout: dict[str, tuple[str, tuple[int, ...], int]] = {}
    offset = 0
    for name, arr in arrays.items():
        offset = -(-offset // _ALIGN) * _ALIGN
        layout[name] = (arr.dtype.str, tuple(arr.shape), offset)
        offset += arr.nbytes
    header = marshal.dumps({"values": values, "arrays": layout})
    start = -(-(len(_MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_MAGIC + len(header).to_bytes(8, "little") + header)
            for name, arr in arrays.items():
                fh.seek(start + layout[name][2])
                fh.write(np.ascontiguousarray(arr).tobytes())
            fh.truncate(start + offset)
            fh.flush()
            os.fsync(fh.fileno())
        replace_cache_file(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_arrays(path: Path) -> tuple[Any, dict[str, npt.NDArray[Any]]]:
    """The values and the arrays (read-only views of a private mapping) of a file.

    Raises:
        ArrayFileError: not a whole file of this format (a short or foreign file).
        OSError: it cannot be opened as a regular file.
    """
    import numpy as np

    with open_regular(path) as f:
        size = f.size
        values, layout, start = _header(path, f)
        mapped = f.map(populate=False)
    arrays: dict[str, npt.NDArray[Any]] = {}
    try:
        for name, (dtype, shape, offset) in layout.items():
            dt = np.dtype(dtype)
            count = int(np.prod(shape)) if shape else 1
            at = start + offset
            if at + count * dt.itemsize > size:
                raise ArrayFileError(f"{path.name}: {name} past the end")
            arrays[name] = np.frombuffer(
                mapped, dtype=dt, count=count, offset=at
            ).reshape(shape)
    except (TypeError, ValueError) as exc:
        raise ArrayFileError(f"{path.name}: bad array {exc}") from exc
    return values, arrays


def read_values(path: Path) -> Any:
    """The values of a file, its arrays not mapped.

    Raises:
        ArrayFileError: not a whole file of this format.
        OSError: it cannot be opened as a regular file.
    """
    with open_regular(path) as f:
        return _header(path, f)[0]


def _header(path: Path, f: RegularFile) -> tuple[Any, Any, int]:
    """The values, the arrays' layout, and where the arrays start."""
    head = f.read(0, len(_MAGIC) + 8)
    if len(head) != len(_MAGIC) + 8 or not head.startswith(_MAGIC):
        raise ArrayFileError(f"{path.name}: not an array file")
    n = int.from_bytes(head[len(_MAGIC) :], "little")
    if n > f.size:
        raise ArrayFileError(f"{path.name}: header past the end")
    try:
        header = marshal.loads(f.read(len(head), n))
        values, layout = header["values"], header["arrays"]
    except (EOFError, ValueError, TypeError, KeyError) as exc:
        raise ArrayFileError(f"{path.name}: header does not decode") from exc
    return values, layout, -(-(len(head) + n) // _ALIGN) * _ALIGN
