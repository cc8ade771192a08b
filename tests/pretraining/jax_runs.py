"""The JAX pre-training runs of test_jax_run.py and test_portable_init.py: their settings.

A straight run on JAX stops on its FLOP budget (`train.flops_budget`, STEPS - 0.5 steps'
worth) well before `train.num_steps`, checkpointing every EVERY steps; test_jax_run.py's
slow tests make it in a child of their own, test_portable_init.py's default fixture in its
one JAX child (`portable_init_child.py`), after that child's own work.
"""

from __future__ import annotations

from helpers import FAST_XLA_FLAGS, set_flags

from electra_tf.config import load_recipe
from electra_tf.pretraining.objectives import train_flops_per_step
from electra_tf.pretraining.run import config_for_data

STEPS, EVERY = 30, 3
# Two host devices in every child, so that all run the same XLA CPU setup.
JAX_FLAGS = f"{FAST_XLA_FLAGS} --xla_force_host_platform_device_count=2"
# The tiny model of every JAX run here (test_portable_init.py's too).
SIZES = {
    "model.num_layers": 1,
    "model.hidden_dim": 16,
    "model.embedding_dim": 8,
    "model.num_heads": 2,
    "model.intermediate_dim": 32,
    "model.max_sequence_length": 16,
    "data.sequence_length": 16,
}
SMALL = {
    **SIZES,
    "train.num_steps": 1000,  # the FLOP budget stops the run at STEPS
    "train.warmup_steps": 2,
    "train.learning_rate": 1e-3,
    "train.checkpoint_every": EVERY,
    "train.log_every": EVERY,
}


def per_step_flops(data):
    """The training FLOPs of one step of the SMALL run on `data` (4 a batch)."""
    overrides = [f"data.train_files={data}", "train.batch_size=4"]
    overrides += [f"{key}={value}" for key, value in SMALL.items()]
    config = config_for_data(load_recipe("tiny").override(*overrides), list(SMALL))
    return train_flops_per_step(config)


def run_args(data, run, budget):
    """`electra-tf pretrain` of the SMALL run on `data` into `run`, stopping at `budget`."""
    values = dict(SMALL, **{"train.flops_budget": budget})
    common = ["--recipe", "tiny", "--data", data, "--batch-size", "4", "--verbose", "0"]
    return ["pretrain", *common, "--output-dir", str(run), *set_flags(values)]
