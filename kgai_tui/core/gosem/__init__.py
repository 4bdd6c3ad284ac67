"""Go's string and JSON semantics (case mapping, white space, RFC3339, escaping)."""
