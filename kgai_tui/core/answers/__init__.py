"""One answer per read, shared by the CLI's ``--json``, the MCP tools and the agent view.

``answer`` (the Answer value, its one encoder, the failure shape, path splitting),
``kg`` (status, doctor, heads, conflicts, history, resolve, export), ``recall``
(context), ``moments`` (as-of, diff) and ``search``.
"""
