"""The exception hierarchy of the core; the CLI maps each class to an exit code."""

from __future__ import annotations

import errno


class KgaiError(Exception):
    """Base class of every error the core raises on purpose."""

    #: What a person at a terminal can do about it, e.g. the command that creates
    #: a missing store. The CLI adds it to its line on stderr; a JSON answer (the
    #: CLI's ``--json``, the MCP tools) leaves it out, so every face keeps printing
    #: the same bytes.
    advice: str = ""


class LineError(KgaiError):
    """A shard line that Go's decoder would refuse (the line is skipped, not fatal)."""


class StoreNotFoundError(KgaiError):
    """No store exists where discovery looked; nothing was created."""

    #: Where discovery looked (a ``StoreLocation``), for the empty answer a read
    #: gives in JSON (``answers.no_store``); ``None`` when not known.
    location: object = None


class UsageError(KgaiError):
    """Bad arguments or input from the user (a timestamp, a query, an ingest file)."""


class NotFoundError(KgaiError):
    """The thing asked for (an element, a decision) is not in the store."""


class WriteError(KgaiError):
    """A write could not be completed; nothing was half-written."""


class LockTimeoutError(WriteError):
    """Another process held the store lock for longer than the bounded wait."""


class RefusedError(KgaiError):
    """The command understood the request but will not do it (exit 1).

    Examples: overwriting a ``.gitignore`` kgai did not write, resolving an element that
    has no conflict.
    """


class ConfigError(KgaiError):
    """``kg.config.json`` exists but cannot be read as the reference engine's config."""


def write_error(exc: OSError, what: str) -> WriteError:
    """Turn an OSError from a write into a :class:`WriteError` with one clear line."""
    if exc.errno == errno.EROFS:
        reason = "the store is on a read-only file system"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        reason = "permission denied"
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        reason = "no space left on the device"
    elif exc.errno == errno.EFBIG:
        reason = "file size limit exceeded"
    else:
        reason = exc.strerror or str(exc)
    return WriteError(f"cannot write {what}: {reason}; nothing was written")
