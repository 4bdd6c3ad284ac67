"""The write path: kg ingest semantics, validation, the lock and durable appends."""
