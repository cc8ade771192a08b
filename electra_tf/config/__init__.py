"""Typed, frozen configuration for pre-training, with recipes and overrides.

A run is described by one `ElectraConfig`, made of four sections:

- `model`: the discriminator's sizes and how the generator derives from them;
- `objective`: masking, sampling and loss weights (the ELECTRA math);
- `data`: where the packed examples are and the special token ids;
- `train`: optimizer, schedule, distribution and checkpointing.

Configs are plain frozen dataclasses: `to_dict()` / `from_dict()` round-trip
through JSON, `override("train.learning_rate=1e-4")` returns a new config, and
a recipe (`recipes/pretrain/<name>.toml`) is a partial dict applied on top of
the defaults. Unknown keys and wrong types fail with one sentence naming the
key. Every checkpoint stores the `ElectraConfig` that made it as JSON.

Example:

>>> config = load_recipe("tiny").override("train.learning_rate=1e-3")
>>> config.train.learning_rate
0.001
>>> ElectraConfig.from_dict(config.to_dict()) == config
True
"""

from electra_tf.config.electra import (
    PRECISIONS,
    STRATEGIES,
    WEIGHT_TYING,
    DataConfig,
    ElectraConfig,
    EncoderConfig,
    ModelConfig,
    ObjectiveConfig,
    TrainConfig,
    load_recipe,
)
from electra_tf.config.fields import (
    ConfigError,
    list_recipes,
    parse_assignments,
    read_recipe_file,
    replace_fields,
)

__all__ = [
    "ConfigError",
    "replace_fields",
    "parse_assignments",
    "read_recipe_file",
    "EncoderConfig",
    "ModelConfig",
    "ObjectiveConfig",
    "DataConfig",
    "TrainConfig",
    "ElectraConfig",
    "load_recipe",
    "list_recipes",
    "WEIGHT_TYING",
    "STRATEGIES",
    "PRECISIONS",
]
