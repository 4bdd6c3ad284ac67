"""Reads turned into their JSON answers (bytes), shared by the CLI, MCP and the TUI."""
