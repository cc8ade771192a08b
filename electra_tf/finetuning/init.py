"""Alias of `electra_tf.finetuning.initialization` (kept for existing imports)."""

from electra_tf.finetuning.initialization import *  # noqa: F403
from electra_tf.finetuning.initialization import __all__  # noqa: F401
