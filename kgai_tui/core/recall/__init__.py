"""Recall relevance: the reference tokenizer and scorer, and the exact recall index."""
