"""Importing existing ADRs into a store (scan, parse, map, plan, import)."""
