"""Benchmarks that print JSON: `python -m electra_tf.bench step ...` (see `step.py`)."""
