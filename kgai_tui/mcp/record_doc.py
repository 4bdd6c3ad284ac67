"""The ``record`` tool's input: kg's ingest document as a typed schema.

Field for field what ``kgai-tui record`` reads
(:mod:`kgai_tui.core.write.ingest_input`), in its canonical spelling: exact key
names, text where kg takes text, any JSON scalar for a prop value. The tool hands
the fields that were given, unchanged, to the same write path, which checks the
rest (a blank title, a mutation missing a field of its op) with the CLI's words.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Decision", "Mutation", "Ref", "ingest_payload"]

#: A prop value: kg keeps any JSON scalar as its text (null is "").
Scalar = str | bool | int | float | None


class _Strict(BaseModel):
    """No unknown keys and no type coercion, at every level."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Ref(_Strict):
    """An external reference."""

    system: str = Field("", description='The system, e.g. "clickup" or "github".')
    url: str = Field("", description="The address of the ticket or document.")


class Mutation(_Strict):
    """One change to the element graph; which fields count depends on ``op``."""

    op: Literal["upsert_element", "set_prop", "add_link", "retire_link"] = Field(
        description="upsert_element (kind, name, props), set_prop (element, key, "
        "value), add_link or retire_link (from, to, link)."
    )
    kind: str = Field(
        "",
        description="upsert_element: the element's kind (service, feature, module, "
        "concept...; default concept).",
    )
    name: str = Field("", description="upsert_element: the element's name.")
    props: dict[str, Scalar] = Field(
        default_factory=dict,
        description='upsert_element: properties, e.g. {"paths": "src/billing/*"}.',
    )
    from_: str = Field(
        "",
        alias="from",
        description='add_link, retire_link: the source element, "kind:name".',
    )
    to: str = Field(
        "", description='add_link, retire_link: the target element, "kind:name".'
    )
    link: str = Field(
        "", description='add_link, retire_link: the link kind, e.g. "DEPENDS_ON".'
    )
    element: str = Field("", description='set_prop: the element, "kind:name".')
    key: str = Field("", description="set_prop: the property's name.")
    value: Scalar = Field(None, description="set_prop: the property's new value.")


class Decision(_Strict):
    """One decision to record."""

    title: str = Field(description="What was decided, in one line.")
    rationale: str = Field("", description="Why.")
    author: str = Field("", description="Who decided (default: the store's actor).")
    date: str = Field(
        "",
        description="When it was decided: YYYY-MM-DD or RFC3339 (default: now).",
    )
    refs: list[Ref] = Field(
        default_factory=list, description="Tickets or documents it refers to."
    )
    supersedes_on: list[str] = Field(
        default_factory=list,
        description='More elements ("kind:name") whose decisions in force it '
        "replaces, besides those its mutations shape.",
    )
    mutations: list[Mutation] = Field(
        default_factory=list, description="What it changes in the element graph."
    )


def _given(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


def ingest_payload(
    decision: Decision | None, decisions: list[Decision] | None
) -> bytes:
    """The ``kgai-tui record`` document holding exactly the fields the agent gave."""
    document: dict[str, Any] = (
        {"decision": _given(decision)}
        if decision is not None
        else {"decisions": [_given(d) for d in decisions or ()]}
    )
    return json.dumps(document, ensure_ascii=False).encode("utf-8")
