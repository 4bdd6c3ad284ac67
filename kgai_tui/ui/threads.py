"""The explorer's thread workers, named once.

Without a ``description``, Textual names a worker by the ``repr`` of every
argument, on the UI thread: a snapshot's repr prints its graph delta, and a
slider jump across a million-decision store spent ~0.08 s there (py-spy)
before any work began. Every worker of the explorer is made here, named by its
group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import work
from textual.worker import Worker

__all__ = ["thread_worker"]


def thread_worker(
    group: str, *, exclusive: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., Worker[Any]]]:
    """``@work`` in a thread, in ``group`` (``exclusive``: a new call cancels the
    group's running one), errors kept from exiting the app, named ``group``."""
    return work(
        thread=True,
        exclusive=exclusive,
        group=group,
        exit_on_error=False,
        description=group,
    )
