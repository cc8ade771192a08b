"""Alias of `electra_tf.serving.conversion` (kept for existing imports)."""

from electra_tf.serving.conversion import *  # noqa: F403
from electra_tf.serving.conversion import __all__  # noqa: F401
