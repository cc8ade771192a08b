"""Benchmarks that print JSON lines: `electra-tf bench step|input|serving` (see each module)."""
