"""Benchmarks that print JSON lines: `electra-tf bench step|peers|floor|serving|...` (see each)."""
