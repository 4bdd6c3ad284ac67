"""The exception hierarchy of the core; the CLI maps each class to an exit code."""

from __future__ import annotations


class KgaiError(Exception):
    """Base class of every error the core raises on purpose."""


class LineError(KgaiError):
    """A shard line that Go's decoder would refuse (the line is skipped, not fatal)."""


class StoreNotFoundError(KgaiError):
    """No store exists where discovery looked; nothing was created."""


class UsageError(KgaiError):
    """Bad arguments or input from the user (a timestamp, a query, an ingest file)."""


class NotFoundError(KgaiError):
    """The thing asked for (an element, a decision) is not in the store."""


class WriteError(KgaiError):
    """A write could not be completed; nothing was half-written."""


class LockTimeoutError(WriteError):
    """Another process held the store lock for longer than the bounded wait."""
