"""The read model on disk: the projection as SQLite rows in the user cache directory.

A read opens it, checks it against the shards' fingerprint and touches only the rows
it needs (one element's decisions, the heads, the conflicts), so a call at a million
decisions costs about what it costs on the demo store. Built from a cold replay,
extended in place when the shards only grew, rebuilt on anything else.
"""
