"""Opening a store: the Engine value, the cold open and the warm cache."""
