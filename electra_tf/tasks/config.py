"""Fine-tuning hyperparameters: a frozen dataclass, task recipes and the paper's per-size values.

Zero means "the paper's value" for the learning rate (3e-4 small, 1e-4 base,
5e-5 large), the layer-wise decay (0.8; 0.9 for large) and the epochs (3;
10 for RTE and STS-B; 2 for SQuAD). Encoders of hidden size 128 or less
(the `tiny` recipe, not in the paper) get 1e-3: on the movie-review task the
tiny demo model reaches 0.70 dev accuracy at 1e-3 and stays at chance (0.52)
at small's 3e-4 within 3 epochs. A task recipe
(`recipes/finetune/<task>.toml`) is a flat table over these defaults.
"""

from __future__ import annotations

import dataclasses
import json

from electra_tf.config import ConfigError, parse_assignments, read_recipe_file, replace_fields

__all__ = ["FinetuneConfig", "load_finetune_recipe", "size_of"]

PAPER_LEARNING_RATE = {"tiny": 1e-3, "small": 3e-4, "base": 1e-4, "large": 5e-5}
PAPER_LAYERWISE_DECAY = {"tiny": 0.8, "small": 0.8, "base": 0.8, "large": 0.9}


def size_of(hidden_dim: int) -> str:
    """Size bucket of an encoder: tiny (<= 128 hidden), small (<= 256), base (<= 768), large."""
    if hidden_dim <= 128:
        return "tiny"
    return "small" if hidden_dim <= 256 else "base" if hidden_dim <= 768 else "large"


@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Fine-tuning settings (paper Table 7 and the reference code)."""

    task: str = "sst2"
    learning_rate: float = 0.0  # 0: the paper's rate for the encoder's size
    batch_size: int = 32
    epochs: int = 0  # 0: the task's epochs in the paper
    warmup_fraction: float = 0.1  # linear warmup, then linear decay to 0
    weight_decay: float = 0.0  # decoupled; LayerNorm and bias excluded
    layerwise_decay: float = 0.0  # 0: the paper's (0.8; 0.9 for large); 1: off
    layerwise_decay_reference: bool = False  # the reference code's extra level (top layer decay^2)
    max_seq_length: int = 128
    dropout: float = 0.1  # before the task head (and in the encoder)
    adam_epsilon: float = 1e-6
    clip_norm: float = 1.0
    seed: int = 1  # first seed; the run's seeds are seed, seed + 1, ...
    seeds: int = 1  # fine-tunings from the same initialization
    patience: int = 0  # stop after this many epochs without a better dev score (0: never)
    group_by_length: bool = True  # batch rows of similar length (each padded to its longest)
    pad_to: str = "longest"  # "max": every batch at max_seq_length (XLA, TPUs: one shape)
    max_train_examples: int = 0  # 0: all; else a random sample of that many (a quick run)
    eval_batch_size: int = 128
    doc_stride: int = 128  # SQuAD: window stride over long contexts
    max_query_length: int = 64  # SQuAD: question tokens kept
    max_answer_length: int = 30  # SQuAD: longest answer predicted, in tokens
    n_best: int = 20  # SQuAD: candidates considered per window
    joint_end: bool = False  # SQuAD: the reference's end-given-start head
    beam_size: int = 20  # SQuAD joint head: starts kept

    def __post_init__(self):
        if self.batch_size < 1 or self.seeds < 1 or self.max_seq_length < 8:
            raise ConfigError("batch_size and seeds must be >= 1 and max_seq_length >= 8.")
        if not 0 <= self.warmup_fraction < 1:
            raise ConfigError(f"warmup_fraction must be in [0, 1), got {self.warmup_fraction}.")
        if self.pad_to not in ("longest", "max"):
            raise ConfigError(f'pad_to must be "longest" or "max", got {self.pad_to!r}.')
        if self.layerwise_decay < 0 or self.layerwise_decay > 1:
            raise ConfigError(f"layerwise_decay must be in [0, 1], got {self.layerwise_decay}.")

    def override(self, *assignments: str) -> FinetuneConfig:
        return replace_fields(self, parse_assignments(self, assignments), "", "override")

    def resolved(self, hidden_dim: int, task_epochs: int) -> FinetuneConfig:
        """The config with paper values filled in for an encoder of `hidden_dim`."""
        size = size_of(hidden_dim)
        return dataclasses.replace(
            self,
            learning_rate=self.learning_rate or PAPER_LEARNING_RATE[size],
            layerwise_decay=self.layerwise_decay or PAPER_LAYERWISE_DECAY[size],
            epochs=self.epochs or task_epochs,
        )

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)


def load_finetune_recipe(name_or_path: str) -> FinetuneConfig:
    """The fine-tuning config of a task recipe (`recipes/finetune/<name>.toml`) or a TOML file."""
    values, source = read_recipe_file(name_or_path, "finetune")
    return replace_fields(FinetuneConfig(), values, "", source)
