"""Plain-text renderers shared by the CLI and the UI."""
