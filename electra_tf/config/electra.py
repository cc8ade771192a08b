"""The pre-training config: typed, frozen sections and the recipes that fill them.

See `electra_tf.config` for the overview and an example.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from electra_tf.config.fields import (
    ConfigError,
    parse_text,
    read_recipe_file,
    replace_sections,
    section_field_type,
)

__all__ = [
    "WEIGHT_TYING",
    "INITIALIZATIONS",
    "STRATEGIES",
    "PRECISIONS",
    "ENCODER_SIZES",
    "EncoderConfig",
    "ModelConfig",
    "ObjectiveConfig",
    "DataConfig",
    "TrainConfig",
    "ElectraConfig",
    "load_recipe",
]

WEIGHT_TYING = ("none", "embeddings", "all")
INITIALIZATIONS = ("reference", "truncated_normal")
STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
#: The `model` fields that size the discriminator's encoder (each at least 1).
ENCODER_SIZES = (
    "vocabulary_size",
    "num_layers",
    "hidden_dim",
    "embedding_dim",
    "num_heads",
    "intermediate_dim",
    "max_sequence_length",
    "num_segments",
)


def _check_finite(section, name: str) -> None:
    """Fails with one sentence on a NaN or infinite float field of a config section."""
    for field in dataclasses.fields(section):
        value = getattr(section, field.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{name}.{field.name} must be a finite number, got {value}.")


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    """Sizes of one Transformer encoder (the generator's or the discriminator's)."""

    vocabulary_size: int
    num_layers: int
    hidden_dim: int
    embedding_dim: int
    num_heads: int
    intermediate_dim: int
    max_sequence_length: int
    num_segments: int
    dropout: float
    initializer_range: float
    layer_norm_epsilon: float
    initialization: str = "reference"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """The discriminator's sizes; the generator is derived from them.

    Defaults are ELECTRA-Small (paper Table 6, reference `configure_pretraining.py`).
    """

    vocabulary_size: int = 30522  # BERT uncased WordPiece
    num_layers: int = 12
    hidden_dim: int = 256
    embedding_dim: int = 128  # < hidden_dim adds a dense `embeddings_project`
    num_heads: int = 4
    intermediate_dim: int = 1024
    max_sequence_length: int = 512  # rows of the position table, not the training length
    num_segments: int = 2
    dropout: float = 0.1  # hidden and attention-probability dropout
    initializer_range: float = 0.02  # std of the truncated-normal init
    layer_norm_epsilon: float = 1e-12
    # Generator: hidden = round(hidden_dim * fraction), FFN = 4 * hidden,
    # heads = max(1, hidden // 64), layers = round(num_layers * layers fraction).
    generator_size_fraction: float = 0.25  # paper: 1/4 small and large, 1/3 base
    generator_layers_fraction: float = 1.0
    # A generator's own sizes where they are not the reference's rule (imported weights
    # record theirs): 0 derives heads = max(1, hidden // 64) and FFN = 4 * hidden.
    generator_num_heads: int = 0
    generator_intermediate_dim: int = 0
    # "embeddings": generator and discriminator share the embedding block (paper default);
    # "none": separate blocks; "all": the generator is the discriminator's encoder
    # (needs generator_size_fraction = 1 and generator_layers_fraction = 1).
    weight_tying: str = "embeddings"
    # "reference": the two dense layers the reference builds without an initializer
    # (embeddings_project and the detection head's 1-unit output) start from TF1's default,
    # Glorot uniform; every other kernel from the truncated normal. "truncated_normal":
    # that normal everywhere, as Hugging Face's port does.
    initialization: str = "reference"

    def __post_init__(self):
        _check_finite(self, "model")
        for name in ENCODER_SIZES:
            if getattr(self, name) < 1:
                raise ConfigError(f"model.{name} must be at least 1, got {getattr(self, name)}.")
        if self.hidden_dim % self.num_heads:
            raise ConfigError(
                f"model.hidden_dim ({self.hidden_dim}) must be divisible by model.num_heads "
                f"({self.num_heads})."
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"model.dropout must be in [0, 1), got {self.dropout}.")
        for name in ("generator_size_fraction", "generator_layers_fraction"):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise ConfigError(f"model.{name} must be in (0, 1], got {value}.")
        for name in ("generator_num_heads", "generator_intermediate_dim"):
            if getattr(self, name) < 0:
                raise ConfigError(f"model.{name} must be 0 (derived) or positive.")
        if self.initialization not in INITIALIZATIONS:
            raise ConfigError(
                f"model.initialization must be one of {', '.join(INITIALIZATIONS)}, "
                f"got {self.initialization!r}."
            )
        if self.weight_tying not in WEIGHT_TYING:
            raise ConfigError(
                f"model.weight_tying must be one of {', '.join(WEIGHT_TYING)}, "
                f"got {self.weight_tying!r}."
            )
        if self.weight_tying == "all" and (
            self.generator_size_fraction != 1.0 or self.generator_layers_fraction != 1.0
        ):
            raise ConfigError(
                "model.weight_tying = 'all' needs a generator as large as the discriminator: "
                "set model.generator_size_fraction=1.0 and model.generator_layers_fraction=1.0."
            )

    def discriminator(self) -> EncoderConfig:
        """The discriminator encoder's sizes."""
        return EncoderConfig(
            vocabulary_size=self.vocabulary_size,
            num_layers=self.num_layers,
            hidden_dim=self.hidden_dim,
            embedding_dim=self.embedding_dim,
            num_heads=self.num_heads,
            intermediate_dim=self.intermediate_dim,
            max_sequence_length=self.max_sequence_length,
            num_segments=self.num_segments,
            dropout=self.dropout,
            initializer_range=self.initializer_range,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initialization=self.initialization,
        )

    def generator(self) -> EncoderConfig:
        """The generator encoder's sizes, derived as in the reference code."""
        if self.generator_size_fraction == 1.0:
            hidden, heads, ffn = self.hidden_dim, self.num_heads, self.intermediate_dim
        else:
            hidden = max(1, int(round(self.hidden_dim * self.generator_size_fraction)))
            heads = max(1, hidden // 64)
            ffn = 4 * hidden
        heads = self.generator_num_heads or heads
        ffn = self.generator_intermediate_dim or ffn
        if hidden % heads:
            raise ConfigError(
                f"The generator's hidden size ({hidden}) must be divisible by its heads "
                f"({heads}); set model.generator_num_heads."
            )
        layers = max(1, int(round(self.num_layers * self.generator_layers_fraction)))
        return dataclasses.replace(
            self.discriminator(),
            num_layers=layers,
            hidden_dim=hidden,
            num_heads=heads,
            intermediate_dim=ffn,
        )


SAMPLERS = ("inverse_cdf", "gumbel")


@dataclasses.dataclass(frozen=True)
class ObjectiveConfig:
    """Masking, sampling and loss weights of the pre-training objective."""

    name: str = "electra"  # the objective's registered name (pretraining/objectives)
    mask_rate: float = 0.15  # 0.25 for large
    mask_token_rate: float = 0.85  # chosen positions shown as [MASK]; the rest keep their token
    random_token_rate: float = 0.0  # chosen positions shown as a random token (BERT: 0.1)
    max_predictions_per_seq: int = 0  # 0: int((mask_rate + 0.005) * sequence_length)
    temperature: float = 1.0  # generator sampling temperature
    sampler: str = "inverse_cdf"  # or "gumbel" (the reference's); the same distribution
    disallow_correct: bool = False  # push the true token's logit down before sampling
    mlm_weight: float = 1.0
    discriminator_weight: float = 50.0
    # unigram: token frequencies (.npy of counts, as prepare writes); "" = the data folder's
    unigram_counts: str = ""
    # two_stage: steps of generator-only training before the switch (0: half of train.num_steps)
    stage_one_steps: int = 0
    # adversarial: weight of the learned baseline's loss
    baseline_weight: float = 1.0

    def __post_init__(self):
        _check_finite(self, "objective")
        for name in ("mlm_weight", "discriminator_weight", "baseline_weight"):
            if getattr(self, name) < 0:
                raise ConfigError(f"objective.{name} must be >= 0, got {getattr(self, name)}.")
        if not 0.0 < self.mask_rate < 1.0:
            raise ConfigError(f"objective.mask_rate must be in (0, 1), got {self.mask_rate}.")
        rates = self.mask_token_rate + self.random_token_rate
        if self.mask_token_rate < 0 or self.random_token_rate < 0 or rates > 1.0 + 1e-9:
            raise ConfigError(
                "objective.mask_token_rate and objective.random_token_rate must be "
                f"non-negative and sum to at most 1, got {self.mask_token_rate} and "
                f"{self.random_token_rate}."
            )
        if self.temperature <= 0:
            raise ConfigError(f"objective.temperature must be positive, got {self.temperature}.")
        if self.sampler not in SAMPLERS:
            choices = ", ".join(SAMPLERS)
            raise ConfigError(f"objective.sampler must be one of {choices}, got {self.sampler!r}.")
        if self.max_predictions_per_seq < 0:
            raise ConfigError("objective.max_predictions_per_seq must be 0 (derived) or positive.")

    def num_predictions(self, sequence_length: int) -> int:
        """N = max_predictions_per_seq, derived from the mask rate when 0 (19 for 128 at 0.15)."""
        if self.max_predictions_per_seq:
            return min(self.max_predictions_per_seq, sequence_length)
        return max(1, int((self.mask_rate + 0.005) * sequence_length))  # as the reference


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """Packed pre-training examples and the vocabulary's special ids (BERT uncased defaults)."""

    train_files: str = ""  # comma-separated files or globs of packed TFRecords, or a prepare dir
    eval_files: str = ""
    vocab_file: str = ""
    lower_case: bool = True  # the vocabulary's casing: lower-case and strip accents (uncased)
    sequence_length: int = 128
    shuffle_block: int = 8192  # examples permuted together (exactly resumable shuffling)
    pad_id: int = 0
    unk_id: int = 100
    cls_id: int = 101
    sep_id: int = 102
    mask_id: int = 103

    def __post_init__(self):
        if self.sequence_length < 4:
            raise ConfigError(
                f"data.sequence_length must be at least 4, got {self.sequence_length}."
            )
        if self.shuffle_block < 1:
            raise ConfigError("data.shuffle_block must be at least 1.")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Optimizer, schedule, distribution, precision and checkpointing."""

    batch_size: int = 128  # global batch, split across replicas
    num_steps: int = 1_000_000  # batches read (a step mixed_float16 skips reads one)
    learning_rate: float = 5e-4
    warmup_steps: int = 10_000
    lr_decay_power: float = 1.0  # 1.0: linear decay to 0 at num_steps
    weight_decay: float = 0.01  # decoupled; LayerNorm and bias excluded
    adam_beta_1: float = 0.9
    adam_beta_2: float = 0.999
    adam_epsilon: float = 1e-6
    clip_norm: float = 1.0  # global-norm clipping; 0 turns it off
    bias_correction: bool = True  # False: the reference code's Adam without bias correction
    seed: int = 1234  # masking, sampling, init and data order all derive from it
    strategy: str = "default"  # default | mirrored | multi_worker | tpu
    cpu_devices: int = 0  # >1 splits the CPU into logical devices (mirrored on one host)
    tpu: str = ""  # TPU address for strategy = tpu ("" = local)
    jit_compile: bool = False  # XLA for the generator and discriminator passes
    mixed_precision: str = "float32"  # float32 | mixed_bfloat16 | mixed_float16
    checkpoint_every: int = 1000
    keep_checkpoints: int = 3
    log_every: int = 100  # TensorBoard scalars every N steps
    eval_steps: int = 0  # batches of data.eval_files evaluated at the end (0: none)
    flops_budget: float = 0.0  # stop once this many training FLOPs are spent (0: num_steps)
    # A step whose loss or gradient norm is not finite changes no weight. "stop" ends the
    # run there (no checkpoint of it; the last good one is kept); "skip" goes on, and stops
    # after max_nonfinite_skips such steps in a row. The run also stops when the median of
    # its last 20 losses exceeds divergence_factor x its lowest (0: never).
    on_nonfinite: str = "stop"
    max_nonfinite_skips: int = 10
    divergence_factor: float = 4.0
    # multi_worker: a collective (gradient all-reduce) that a lost worker leaves unfinished
    # fails after this many seconds instead of hanging; the run then stops with a message.
    collective_timeout: float = 300.0

    def __post_init__(self):
        at_least_one = ("batch_size", "num_steps", "checkpoint_every", "keep_checkpoints")
        for name in (*at_least_one, "log_every"):
            if getattr(self, name) < 1:
                raise ConfigError(f"train.{name} must be at least 1, got {getattr(self, name)}.")
        if self.warmup_steps < 0:
            raise ConfigError(f"train.warmup_steps must be >= 0, got {self.warmup_steps}.")
        _check_finite(self, "train")
        if self.learning_rate <= 0:
            raise ConfigError(f"train.learning_rate must be positive, got {self.learning_rate}.")
        not_negative = ("weight_decay", "adam_epsilon", "clip_norm", "flops_budget")
        for name in (*not_negative, "divergence_factor"):
            if getattr(self, name) < 0:
                raise ConfigError(f"train.{name} must be >= 0, got {getattr(self, name)}.")
        for name in ("adam_beta_1", "adam_beta_2"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"train.{name} must be in [0, 1), got {getattr(self, name)}.")
        if self.on_nonfinite not in ("stop", "skip"):
            raise ConfigError(
                f"train.on_nonfinite must be stop or skip, not {self.on_nonfinite!r}."
            )
        if self.max_nonfinite_skips < 1:
            raise ConfigError("train.max_nonfinite_skips must be at least 1.")
        if self.collective_timeout <= 0:
            raise ConfigError("train.collective_timeout must be positive (seconds).")
        if self.strategy not in STRATEGIES:
            raise ConfigError(
                f"train.strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}."
            )
        if self.mixed_precision not in PRECISIONS:
            raise ConfigError(
                f"train.mixed_precision must be one of {', '.join(PRECISIONS)}, "
                f"got {self.mixed_precision!r}."
            )


@dataclasses.dataclass(frozen=True)
class ElectraConfig:
    """Everything that defines a pre-training run; saved with every checkpoint."""

    model: ModelConfig = dataclasses.field(default_factory=ModelConfig)
    objective: ObjectiveConfig = dataclasses.field(default_factory=ObjectiveConfig)
    data: DataConfig = dataclasses.field(default_factory=DataConfig)
    train: TrainConfig = dataclasses.field(default_factory=TrainConfig)

    def __post_init__(self):
        if self.data.sequence_length > self.model.max_sequence_length:
            raise ConfigError(
                f"data.sequence_length ({self.data.sequence_length}) exceeds "
                f"model.max_sequence_length ({self.model.max_sequence_length}); lower the first "
                "or raise the second."
            )

    @property
    def num_predictions(self) -> int:
        """Masked positions per sequence (N) for this run's sequence length."""
        return self.objective.num_predictions(self.data.sequence_length)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "config") -> ElectraConfig:
        """Builds a config from a (possibly partial) nested dict over the defaults."""
        return replace_sections(cls(), values, source)

    @classmethod
    def from_json(cls, text: str, source: str = "config") -> ElectraConfig:
        return cls.from_dict(json.loads(text), source)

    def update(self, values: dict[str, Any], source: str = "config") -> ElectraConfig:
        """A new config with the nested dict `values` applied on top of this one."""
        return replace_sections(self, values, source)

    def override(self, *assignments: str) -> ElectraConfig:
        """A new config with dotted `section.key=value` assignments applied.

        Values are parsed by the field's type; an unknown key or a value of
        the wrong type raises `ConfigError` naming the key.
        """
        values: dict[str, dict[str, Any]] = {}
        for assignment in assignments:
            key, sep, raw = assignment.partition("=")
            key = key.strip()
            if not sep or "." not in key:
                raise ConfigError(
                    f"Override {assignment!r} is not of the form section.key=value "
                    "(for example train.learning_rate=1e-4)."
                )
            section, _, name = key.partition(".")
            field_type = section_field_type(self, section, name, key)
            values.setdefault(section, {})[name] = parse_text(raw.strip(), field_type, key)
        return replace_sections(self, values, "override")


def load_recipe(name_or_path: str | Path = "small") -> ElectraConfig:
    """The pre-training config of a named recipe (tiny, small, base, large) or a TOML file.

    A recipe is a partial config: the tables it gives override the defaults
    (which are ELECTRA-Small's).
    """
    values, source = read_recipe_file(name_or_path, "pretrain")
    return ElectraConfig.from_dict(values, source)
