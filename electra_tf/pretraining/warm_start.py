"""Continued pre-training: a run that starts from a released or earlier encoder.

`WarmStart` carries what a source gives a new run: the discriminator encoder's
sizes and weights, its vocabulary and casing, and, where the source has them,
the replaced-token head and a trained generator. `config_for_warm_start` makes
the run's config agree with it (sizes, vocabulary, special ids), and
`apply_warm_start` copies the weights into a freshly built pretrainer. Without
a trained generator the run's generator is new, at
`model.generator_size_fraction` of the source's width, its embeddings tied to
the source's. Sources are read by `electra_tf.tasks.initialization.load_warm_start`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from electra_tf.config import ConfigError, ElectraConfig
from electra_tf.config.electra import ENCODER_SIZES

__all__ = ["WarmStart", "config_for_warm_start", "apply_warm_start", "check_vocabulary"]

_ENCODER_FIELDS = (
    *ENCODER_SIZES,
    "initializer_range",
    "layer_norm_epsilon",
)
_GENERATOR_FIELDS = (
    "generator_size_fraction",
    "generator_layers_fraction",
    "generator_num_heads",
    "generator_intermediate_dim",
    "weight_tying",
)


@dataclasses.dataclass
class WarmStart:
    """What a source gives a new pre-training run.

    Attributes:
        source: where it came from (shown in logs and reports).
        encoder_config: the discriminator encoder's sizes (`ElectraEncoder` arguments).
        encoder_weights: its weights, in `encoder.weights` order.
        vocab_file, lower_case: the vocabulary and its casing.
        head_weights: the replaced-token head's weights, or None (a fresh head).
        generator_model: the source's generator settings (`model.generator_*` and
            `model.weight_tying`), or None when the source has no trained generator.
        generator_weights: that generator's weights, in `generator.weights` order.
    """

    source: str
    encoder_config: dict
    encoder_weights: list
    vocab_file: str
    lower_case: bool = True
    head_weights: list | None = None
    generator_model: dict | None = None
    generator_weights: list | None = None

    @classmethod
    def from_pretrainer(cls, source: str, model, with_head: bool, with_generator: bool):
        """The warm start of an `ElectraPretrainer` (its config must record a vocabulary)."""
        if not model.config.data.vocab_file:
            raise ConfigError(f"{source} records no vocabulary; import it with --vocab-file first.")
        config = model.config.model
        generator_model = None
        if with_generator:
            generator_model = {name: getattr(config, name) for name in _GENERATOR_FIELDS}
        encoder = model.discriminator.encoder.get_config()
        encoder.pop("name", None)
        return cls(
            source=source,
            encoder_config=encoder,
            encoder_weights=[np.asarray(w.numpy()) for w in model.discriminator.encoder.weights],
            vocab_file=model.config.data.vocab_file,
            lower_case=model.config.data.lower_case,
            head_weights=(
                [np.asarray(w.numpy()) for w in model.discriminator.rtd_head.weights]
                if with_head
                else None
            ),
            generator_model=generator_model,
            generator_weights=(
                [np.asarray(w.numpy()) for w in model.generator.weights] if with_generator else None
            ),
        )


def check_vocabulary(vocab_file, other_file, what: str) -> None:
    """Fails with one sentence when two vocabulary files hold different tokens."""
    from electra_tf.data.vocabulary import read_vocabulary

    if read_vocabulary(vocab_file) != read_vocabulary(other_file):
        raise ConfigError(
            f"{what} was made with the vocabulary {other_file}, not the starting point's "
            f"{vocab_file}; prepare it again with --vocab-file {vocab_file}."
        )


def config_for_warm_start(config: ElectraConfig, warm: WarmStart) -> ElectraConfig:
    """`config` with the source's sizes, vocabulary, casing and special ids.

    The generator keeps the source's settings when the source has a trained one;
    otherwise the run's `model.generator_size_fraction` (and layers fraction) apply to
    the source's width, with the reference's derived heads and feed-forward size.
    """
    from electra_tf.data.vocabulary import read_vocabulary, special_ids

    if config.data.vocab_file:  # a prepare folder's vocabulary must be the source's
        check_vocabulary(warm.vocab_file, config.data.vocab_file, config.data.train_files)
    model = {name: warm.encoder_config[name] for name in _ENCODER_FIELDS}
    if warm.generator_model is not None:
        model.update(warm.generator_model)
    else:
        model.update(generator_num_heads=0, generator_intermediate_dim=0)
        if config.model.weight_tying == "all":
            model["weight_tying"] = "all"
    tokens = read_vocabulary(warm.vocab_file)
    if len(tokens) != model["vocabulary_size"]:
        raise ConfigError(
            f"{warm.vocab_file} holds {len(tokens)} tokens but {warm.source} has a vocabulary "
            f"of {model['vocabulary_size']}."
        )
    data = {"vocab_file": str(warm.vocab_file), "lower_case": warm.lower_case}
    data.update({f"{name}_id": value for name, value in special_ids(tokens).items()})
    if config.data.sequence_length > model["max_sequence_length"]:
        data["sequence_length"] = model["max_sequence_length"]
    return config.update({"model": model, "data": data}, source=warm.source)


def apply_warm_start(pretrainer, warm: WarmStart) -> None:
    """Copies the source's weights into a pretrainer built from `config_for_warm_start`."""

    def copy(variables, values, what):
        if len(variables) != len(values):
            raise ConfigError(f"{warm.source}: its {what} does not match the run's model.")
        for variable, value in zip(variables, values, strict=True):
            if tuple(variable.shape) != tuple(np.shape(value)):
                raise ConfigError(
                    f"{warm.source}: {what} weight {variable.path} has shape "
                    f"{list(np.shape(value))}, the run's model {list(variable.shape)}."
                )
            variable.assign(np.asarray(value, np.float32).astype(variable.dtype))

    if warm.generator_weights is not None:
        copy(pretrainer.generator.weights, warm.generator_weights, "generator")
    copy(pretrainer.discriminator.encoder.weights, warm.encoder_weights, "encoder")
    if warm.head_weights is not None:
        copy(pretrainer.discriminator.rtd_head.weights, warm.head_weights, "detection head")
