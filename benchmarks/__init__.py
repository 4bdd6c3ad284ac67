"""Benchmarks and the synthetic log generator; not shipped in the wheel."""
