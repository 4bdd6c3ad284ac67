"""The answer of ``context`` (alias ``recall``; the MCP ``recall`` tool and the agent
view): the decisions in force for the elements in play."""

from __future__ import annotations

from collections.abc import Sequence

from kgai_tui.core.answers.answer import Answer, split_paths
from kgai_tui.core.reads.context import DEFAULT_MAX, context_obj
from kgai_tui.core.reads.store import StoreSource

__all__ = ["DEFAULT_MAX", "recall_answer"]


def recall_answer(
    engine: StoreSource,
    paths: str | Sequence[str] = (),
    about: str = "",
    limit: int = DEFAULT_MAX,
) -> Answer:
    """``context --paths P --about A --max N``.

    Args:
        engine: the store.
        paths: file paths or globs, as one comma-separated string or a list
            (:func:`~kgai_tui.core.answers.answer.split_paths`).
        about: a topic in words.
        limit: at most this many elements (``<= 0`` means the default, 15).
    """
    obj = context_obj(
        engine().projection, paths=split_paths(paths), about=about, limit=limit
    )
    return Answer(obj, floats=True)
