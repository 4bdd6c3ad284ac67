"""Full-text search: the tantivy BM25 index, its documents, cache, ranking and snippets."""
