"""The time index: per-key histories behind as-of reads and the time slider."""
