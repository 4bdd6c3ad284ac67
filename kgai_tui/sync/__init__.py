"""kgai-tui sync: share a store's shards through git, append-only."""
