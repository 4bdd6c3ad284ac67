"""Read-only Cypher over kg's graph schema (``kgai-tui query``), on an embedded
graph database derived from the projection."""
