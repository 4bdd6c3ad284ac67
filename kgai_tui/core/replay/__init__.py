"""Replay: the projection (the fold of events) and the read-only view it meets."""
