"""The capture policy: what an agent records, written once.

The stop hook's nudge, the skill of the Claude Code kit, the MCP ``record`` tool's
description (kgai_tui/mcp/text.py) and docs/agents.md all say this; the reference's changelog is why it exists at all: agents that recognised a
decision recorded it only half to three quarters of the time until the end of a turn
that edited code asked them once.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CAPTURE_RULES", "RECORD_WHEN", "STOP_NUDGE"]

#: What counts, what does not, and how to record it (the skill quotes it whole).
CAPTURE_RULES: Final = """\
Read before you change code: `recall` (or `kgai-tui context --paths <files>`) for the \
files you are about to edit, and respect the decisions in force it returns, or \
consciously supersede them.

Record after you change code, once per structural decision, in the same turn:
- DO record: splitting, merging or moving a module, service or feature; renaming a \
domain element (its canonical name, not a file or function); adding, replacing or \
dropping a dependency, vendor or data store; changing an ownership or API boundary, \
how something is exposed, stored or rendered; deprecating or replacing an earlier \
decision (say which, with `supersedes_on`).
- DO NOT record: bug fixes, formatting, code-level renames, tests, analyses, reports \
or recommendations that nobody acted on, or what a person only asked about.
- Each decision: a title that states the choice, a rationale that says why (and what \
was ruled out), the elements it shapes as `upsert_element` mutations with the store's \
own names (search first: `search` finds the vocabulary), links with `add_link`.
- Conflicts are the team's: show them and ask which side stands; never resolve one on \
your own. Trust is the user's: never approve or dismiss a `.kgairc` yourself.
"""

#: When to call ``record`` (the MCP tool's description says it in these words).
RECORD_WHEN: Final = (
    "Call it in the turn that made a structural decision: a module, service or "
    "feature split, merged or moved; a domain element renamed; a dependency, vendor "
    "or data store added or replaced; an ownership or API boundary, or how something "
    "is exposed, stored or rendered, changed; an earlier decision replaced. Never for "
    "bug fixes, formatting, code-level renames, tests, or analyses nobody acted on; "
    "when the person asks for a record, record what they say."
)

#: The stop hook's one question, when the turn edited files and recorded nothing.
STOP_NUDGE: Final = (
    "Before you stop: this turn edited files and recorded no decision. If it made a "
    "structural decision (a module, service or feature split, merged or moved; a "
    "domain element renamed; a dependency, vendor or data store added or replaced; "
    "an ownership or API boundary, or how something is exposed, stored or rendered, "
    "changed; an earlier decision replaced), record it now with one `record` call "
    "(or `kgai-tui record`), without asking. If it made none (a bug fix, formatting, "
    "a code-level rename, tests, an analysis nobody acted on), record nothing and "
    "stop. Either way, say in one line what you captured, or that nothing needed it."
)
