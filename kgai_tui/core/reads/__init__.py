"""The kg-shaped reads: heads, conflicts, history, recall, as-of, export, health, diff."""
