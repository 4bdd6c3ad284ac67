"""The wire format: events, ids, props and the canonical line codec and checks."""
