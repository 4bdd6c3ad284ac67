"""Private scratch directories for big transient files, in memory when it can be.

A cold open's workers hand their results over in files (~110 MB at 1M decisions)
and the search index's helper its documents, both in tmpfs (``/dev/shm``) when
there is one. A process that is killed (SIGKILL, the kernel's OOM killer: a first
read at 10M on a small machine) runs no cleanup, and in tmpfs what it left holds
memory until the machine restarts. So each directory is named for the process
that owns it (``kgai-<kind>-<pid namespace>-<pid>-<random>``), and making one
first removes the directories of that kind whose owner is gone. Only owners in
this process's pid namespace are asked after: a container sharing ``/dev/shm``
numbers its processes apart.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from typing import Final

__all__ = ["SHM", "make_scratch", "sweep_scratch"]

#: Where scratch goes when it is writable (memory); else the system's temp dir.
SHM: Final = "/dev/shm"
#: A directory without an owner in its name (an earlier release's) is removed
#: once it is this old (seconds): no open or build runs for a day.
_UNOWNED_AFTER: Final = 24 * 3600


def make_scratch(kind: str, where: str | None = None) -> str:
    """A new private directory for ``kind`` (``"open"``, ``"index"``) in
    ``where`` (default: :data:`SHM` if writable, else, or when it is full, the
    temp dir), after the dead owners' directories of that kind there are removed.

    Raises:
        OSError: no directory could be made.
    """
    if where is not None:
        places = [where]
    else:
        places = [SHM] if os.access(SHM, os.W_OK) else []
        places.append(tempfile.gettempdir())
    failed = OSError("no place for scratch")
    for place in places:
        sweep_scratch(kind, place)
        try:
            return tempfile.mkdtemp(prefix=f"kgai-{kind}-{_owner()}-", dir=place)
        except OSError as exc:
            failed = exc
    raise failed


def sweep_scratch(kind: str, where: str) -> None:
    """Remove the ``kind`` directories in ``where`` whose owner has ended (and
    an earlier release's, once a day old); another user's cannot be, and stay."""
    prefix = f"kgai-{kind}-"
    with contextlib.suppress(OSError):
        names = os.listdir(where)
        for name in names:
            if not name.startswith(prefix):
                continue
            path = os.path.join(where, name)
            parts = name[len(prefix) :].split("-")
            if len(parts) == 3 and parts[1].isdigit():
                if parts[0] != _namespace() or _alive(int(parts[1])):
                    continue
            elif time.time() - os.lstat(path).st_mtime < _UNOWNED_AFTER:
                continue
            shutil.rmtree(path, ignore_errors=True)


def _namespace() -> str:
    """This process's pid namespace (its inode), ``0`` where there is none."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def _owner() -> str:
    return f"{_namespace()}-{os.getpid()}"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
