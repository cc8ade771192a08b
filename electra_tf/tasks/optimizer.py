"""Layer-wise learning-rate decay for fine-tuning (ELECTRA_SPEC.md, "Fine-tuning").

Depths: the embeddings (and `embeddings_project`) are depth 0, encoder layer
i is depth i + 1, the task head is the top. A variable at depth d trains at
`lr * decay ** (top - d)`. The paper's top is L + 1, so the last encoder layer
gets `decay` and the head the full rate. The reference code counts one extra
level (top = L + 2 for the head, so the last layer gets `decay ** 2`);
`reference=True` reproduces it.
"""

from __future__ import annotations

from electra_tf.pretraining.optimizer import ElectraAdamW, WarmupLinearDecay

__all__ = [
    "layer_depths",
    "layerwise_multipliers",
    "LayerwiseAdamW",
    "finetuning_optimizer",
    "finetuning_schedule",
    "depth_rates",
]


def layer_depths(model, reference: bool = False) -> tuple[dict[int, int], int]:
    """(`id(variable)` -> depth, top depth) for a fine-tuning model with an `encoder`."""
    encoder = model.encoder
    top = encoder.num_layers + (2 if reference else 1)
    depths = {}
    for variable in encoder.embeddings.trainable_variables:
        depths[id(variable)] = 0
    if encoder.embeddings_project is not None:
        for variable in encoder.embeddings_project.trainable_variables:
            depths[id(variable)] = 0
    for i, layer in enumerate(encoder.transformer_layers):
        for variable in layer.trainable_variables:
            depths[id(variable)] = i + 1
    for variable in model.trainable_variables:
        depths.setdefault(id(variable), top)
    return depths, top


def depth_rates(num_layers: int, decay: float, reference: bool = False) -> str:
    """Each depth's learning-rate multiplier, as one line for the run's log.

    >>> depth_rates(2, 0.8)
    'embeddings 0.51x, layer 1 0.64x, layer 2 0.8x, head 1x'
    """
    top = num_layers + (2 if reference else 1)
    parts = [f"embeddings {decay**top:.2g}x"]
    parts += [f"layer {i} {decay ** (top - i):.2g}x" for i in range(1, num_layers + 1)]
    return ", ".join([*parts, "head 1x"])


def layerwise_multipliers(model, decay: float, reference: bool = False) -> dict[int, float]:
    """`id(variable)` -> learning-rate multiplier `decay ** (top - depth)`."""
    depths, top = layer_depths(model, reference)
    return {key: decay ** (top - depth) for key, depth in depths.items()}


class LayerwiseAdamW(ElectraAdamW):
    """`ElectraAdamW` whose learning rate (and hence decoupled weight decay) is scaled per variable.

    `ElectraAdamW` applies the decay with the scaled rate, so the factor scales both.

    Args:
        multipliers: `id(keras variable)` -> factor, from `layerwise_multipliers`.
        **kwargs: as `ElectraAdamW`.
    """

    def __init__(self, multipliers: dict[int, float] | None = None, **kwargs):
        super().__init__(**kwargs)
        self._multipliers_by_id = dict(multipliers or {})
        self._multipliers = {}

    def build(self, variables):
        super().build(variables)
        self._multipliers = {
            self._var_key(v): self._multipliers_by_id.get(id(v), 1.0) for v in variables
        }

    def _multiplier(self, variable) -> float:
        return self._multipliers.get(self._var_key(variable), 1.0)


def finetuning_schedule(config, total_steps: int, offset: int = 0) -> WarmupLinearDecay:
    """The paper's fine-tuning schedule: linear warmup over `config.warmup_fraction` of
    `total_steps`, then linear decay to 0, starting at optimizer step `offset`."""
    return WarmupLinearDecay(
        config.learning_rate,
        total_steps=total_steps,
        warmup_steps=int(config.warmup_fraction * total_steps),
        offset=offset,
    )


def finetuning_optimizer(model, config, total_steps: int) -> LayerwiseAdamW:
    """The paper's fine-tuning optimizer for `model` (a model with an `encoder`).

    Layer-wise AdamW at `config.learning_rate` with `config.warmup_fraction` linear
    warmup, then linear decay to 0 at `total_steps`; `config` is a resolved
    `FinetuneConfig` (or anything with its fields).
    """
    schedule = finetuning_schedule(config, total_steps)
    return LayerwiseAdamW(
        multipliers=layerwise_multipliers(
            model, config.layerwise_decay, reference=config.layerwise_decay_reference
        ),
        learning_rate=schedule,
        weight_decay=config.weight_decay,
        epsilon=config.adam_epsilon,
        clip_norm=config.clip_norm,
    )
