"""The element props blob: ``key=value`` lines, sorted by key (spec 4.1)."""

from __future__ import annotations

from kgai_tui.core.gotext import go_trim_space


def set_prop(blob: str, key: str, value: str) -> str:
    """Return the blob with ``key`` set to ``value``, as the reference's setProp."""
    key = go_trim_space(key).replace("\n", " ").replace("\r", " ").replace("=", "-")
    value = value.replace("\n", " ").replace("\r", " ")
    new_line = key + "=" + value
    lines: list[tuple[str, str]] = []
    replaced = False
    for raw in blob.split("\n"):
        line = go_trim_space(raw)
        if not line:
            continue
        line_key = line.split("=", 1)[0]
        if line_key == key:
            lines.append((key, new_line))
            replaced = True
        else:
            lines.append((line_key, line))
    if not replaced:
        lines.append((key, new_line))
    lines.sort(key=lambda kv: kv[0])
    return "\n".join(line for _, line in lines)


def parse_props(blob: str) -> dict[str, str]:
    """Read a props blob into a dict (lines without ``=`` are ignored)."""
    out: dict[str, str] = {}
    for raw in blob.split("\n"):
        line = go_trim_space(raw)
        if "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k] = v
    return out
