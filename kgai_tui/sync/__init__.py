"""kgai-tui sync: share a store's shards through git or S3 segments, append-only."""
