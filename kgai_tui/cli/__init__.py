"""The command line: click commands that resolve a store, call core once and print."""
