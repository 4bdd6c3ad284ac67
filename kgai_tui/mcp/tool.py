"""How kgai's MCP tools are built: strict arguments, a self-contained schema, and
one sentence when the arguments are wrong."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import ConfigDict, ValidationError

from kgai_tui.mcp.arg_errors import argument_error

if TYPE_CHECKING:
    from mcp.server.mcpserver.context import Context

__all__ = ["READ_ONLY", "WRITE", "KgaiTool", "inline_refs", "make_tool"]

#: Reads change nothing and reach nothing beyond the store.
READ_ONLY = ToolAnnotations(
    read_only_hint=True, idempotent_hint=True, open_world_hint=False
)
#: Writes only append, and the same call again adds nothing (an identical decision
#: is recorded once; a resolved conflict has nothing left to resolve).
WRITE = ToolAnnotations(
    read_only_hint=False,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=False,
)


class KgaiTool(Tool):
    """A tool whose argument errors come back as one sentence, not pydantic's dump."""

    async def run(
        self,
        arguments: dict[str, Any],
        context: Context[Any, Any],
        convert_result: bool = False,
    ) -> Any:
        """Check the arguments, then run the tool as the SDK does.

        Raises:
            ToolError: the arguments do not fit the schema (the sentence says how).
        """
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            message = argument_error(self.name, self.parameters, arguments, exc)
            raise ToolError(message) from None
        return await super().run(arguments, context, convert_result)


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` replaced by its definition and no ``$defs``.

    Some clients do not follow references; the models here are not recursive.
    """
    defs: Mapping[str, Any] = schema.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = defs[ref.removeprefix("#/$defs/")]
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return inline({**target, **rest})
        return {k: inline(v) for k, v in node.items() if k != "$defs"}

    inlined: dict[str, Any] = inline(schema)
    return inlined


def make_tool(
    fn: Callable[..., CallToolResult],
    *,
    title: str,
    description: str,
    annotations: ToolAnnotations,
) -> Tool:
    """Build a tool whose arguments are validated strictly: unknown names are errors.

    The SDK ignores arguments it does not know; an agent that writes ``about``
    instead of ``topic`` would then get an unfiltered answer without noticing.
    """
    tool = KgaiTool.from_function(
        fn,
        title=title,
        description=description,
        annotations=annotations.model_copy(update={"title": title}),
        structured_output=False,
    )
    base = tool.fn_metadata.arg_model
    strict = cast(
        "type[ArgModelBase]",
        type(
            base.__name__,
            (base,),
            {
                "model_config": ConfigDict(
                    extra="forbid", arbitrary_types_allowed=True
                ),
                "__module__": base.__module__,
            },
        ),
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters = inline_refs(strict.model_json_schema(by_alias=True))
    return tool
