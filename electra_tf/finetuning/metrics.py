"""Alias of `electra_tf.metrics`, where the metrics now live (kept for existing imports)."""

from electra_tf.metrics import *  # noqa: F403
from electra_tf.metrics import __all__  # noqa: F401
