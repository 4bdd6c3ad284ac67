"""The MCP server: tools over one store, its engine cache and its wire shapes."""
