"""The reference code's TF1 checkpoints, in and out.

One table (`reference_names`) maps every variable of an `ElectraPretrainer`
to its name in the reference code's checkpoints (ELECTRA_SPEC.md), with the
reshape between Keras's per-head attention kernels `[H, heads, head]` and the
reference's `[H, H]`. Hugging Face's names derive from these (`hugging_face`).

- `import_reference_checkpoint(path)`: a TF1 checkpoint (`model.ckpt-N`) into a
  pretrainer (generator and discriminator); optimizer slots (`adam_m`, `adam_v`)
  and `global_step` are not weights and are skipped. Sizes come from the
  checkpoint's shapes (heads = hidden // 64, as in the reference, unless given).
- `export_reference_checkpoint(model, path)`: the inverse (a TF1 name-based checkpoint).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from electra_tf.config import ConfigError, ElectraConfig

__all__ = [
    "encoder_entries",
    "reference_names",
    "assign_weight",
    "export_reference_checkpoint",
    "import_reference_checkpoint",
]


def encoder_entries(encoder, scope: str, with_embeddings: bool, embeddings_scope: str):
    """(reference name, Keras variable, reference shape or None) of one encoder's weights."""
    entries = []
    if with_embeddings:
        emb = encoder.embeddings
        base = f"{embeddings_scope}/embeddings"
        entries += [
            (f"{base}/word_embeddings", emb.token_embedding.embeddings, None),
            (f"{base}/position_embeddings", emb.position_embedding.embeddings, None),
            (f"{base}/token_type_embeddings", emb.segment_embedding.embeddings, None),
            (f"{base}/LayerNorm/gamma", emb.layer_norm.gamma, None),
            (f"{base}/LayerNorm/beta", emb.layer_norm.beta, None),
        ]
    if encoder.embeddings_project is not None:
        entries += [
            (f"{scope}/embeddings_project/kernel", encoder.embeddings_project.kernel, None),
            (f"{scope}/embeddings_project/bias", encoder.embeddings_project.bias, None),
        ]
    hidden = encoder.hidden_dim
    for i, layer in enumerate(encoder.transformer_layers):
        att = layer._self_attention_layer
        base = f"{scope}/encoder/layer_{i}"
        for part, dense in (
            ("query", att._query_dense),
            ("key", att._key_dense),
            ("value", att._value_dense),
        ):
            entries += [
                (f"{base}/attention/self/{part}/kernel", dense.kernel, (hidden, hidden)),
                (f"{base}/attention/self/{part}/bias", dense.bias, (hidden,)),
            ]
        entries += [
            (f"{base}/attention/output/dense/kernel", att._output_dense.kernel, (hidden, hidden)),
            (f"{base}/attention/output/dense/bias", att._output_dense.bias, None),
            (
                f"{base}/attention/output/LayerNorm/gamma",
                layer._self_attention_layer_norm.gamma,
                None,
            ),
            (
                f"{base}/attention/output/LayerNorm/beta",
                layer._self_attention_layer_norm.beta,
                None,
            ),
            (
                f"{base}/intermediate/dense/kernel",
                layer._feedforward_intermediate_dense.kernel,
                None,
            ),
            (f"{base}/intermediate/dense/bias", layer._feedforward_intermediate_dense.bias, None),
            (f"{base}/output/dense/kernel", layer._feedforward_output_dense.kernel, None),
            (f"{base}/output/dense/bias", layer._feedforward_output_dense.bias, None),
            (f"{base}/output/LayerNorm/gamma", layer._feedforward_layer_norm.gamma, None),
            (f"{base}/output/LayerNorm/beta", layer._feedforward_layer_norm.beta, None),
        ]
    return entries


def reference_names(model) -> list[tuple[str, object, tuple | None]]:
    """(reference name, Keras variable, reference shape if it differs) for a pretrainer or
    a discriminator; each variable appears once."""
    discriminator = getattr(model, "discriminator", model)
    entries = encoder_entries(discriminator.encoder, "electra", True, "electra")
    head = discriminator.rtd_head
    entries += [
        ("discriminator_predictions/dense/kernel", head.dense.kernel, None),
        ("discriminator_predictions/dense/bias", head.dense.bias, None),
        ("discriminator_predictions/dense_1/kernel", head.dense_prediction.kernel, None),
        ("discriminator_predictions/dense_1/bias", head.dense_prediction.bias, None),
    ]
    generator = getattr(model, "generator", None)
    if generator is not None:
        if generator.encoder is not discriminator.encoder:
            shared = generator.encoder.embeddings is discriminator.encoder.embeddings
            entries += encoder_entries(
                generator.encoder, "generator", not shared, "electra" if shared else "generator"
            )
        mlm = generator.mlm_head
        entries += [
            ("generator_predictions/dense/kernel", mlm._intermediate_dense.kernel, None),
            ("generator_predictions/dense/bias", mlm._intermediate_dense.bias, None),
            ("generator_predictions/LayerNorm/gamma", mlm._intermediate_layer_norm.gamma, None),
            ("generator_predictions/LayerNorm/beta", mlm._intermediate_layer_norm.beta, None),
            ("generator_predictions/output_bias", mlm._bias, None),
        ]
    return entries


def assign_weight(variable, value, name: str, source: str) -> None:
    """Sets `variable` from an array of the same size (reshaped), or names the mismatch."""
    value = np.asarray(value)
    if value.size != int(np.prod(variable.shape)):
        raise ConfigError(
            f"{source}: {name} has shape {list(value.shape)} but the model expects "
            f"{list(variable.shape)}; the config does not match these weights."
        )
    variable.assign(value.reshape(variable.shape).astype(variable.dtype))


def export_reference_checkpoint(model, path) -> str:
    """Writes the model's weights under the reference names (a TF1 name-based checkpoint)."""
    import tensorflow as tf

    names, tensors = [], []
    for name, variable, shape in reference_names(model):
        value = np.asarray(variable.numpy(), np.float32)
        names.append(name)
        tensors.append(tf.constant(value.reshape(shape) if shape else value))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tf.raw_ops.SaveV2(
        prefix=str(path), tensor_names=names, shape_and_slices=[""] * len(names), tensors=tensors
    )
    return str(path)


def _config_from_reference(shapes: dict, num_heads: int | None) -> ElectraConfig:
    def need(name):
        if name not in shapes:
            raise ConfigError(f"The checkpoint has no {name}; is it an ELECTRA checkpoint?")
        return shapes[name]

    vocabulary, embedding = need("electra/embeddings/word_embeddings")
    positions = need("electra/embeddings/position_embeddings")[0]
    segments = need("electra/embeddings/token_type_embeddings")[0]
    hidden, intermediate = need("electra/encoder/layer_0/intermediate/dense/kernel")
    layers = len(
        {m.group(1) for n in shapes if (m := re.match(r"electra/encoder/layer_(\d+)/", n))}
    )
    values = {
        "vocabulary_size": vocabulary,
        "embedding_dim": embedding,
        "hidden_dim": hidden,
        "intermediate_dim": intermediate,
        "num_layers": layers,
        "num_heads": num_heads or max(1, hidden // 64),
        "max_sequence_length": positions,
        "num_segments": segments,
    }
    if "generator/encoder/layer_0/intermediate/dense/kernel" in shapes:
        generator_hidden = shapes["generator/encoder/layer_0/intermediate/dense/kernel"][0]
        generator_layers = len(
            {m.group(1) for n in shapes if (m := re.match(r"generator/encoder/layer_(\d+)/", n))}
        )
        values["generator_size_fraction"] = generator_hidden / hidden
        values["generator_layers_fraction"] = generator_layers / layers
        values["weight_tying"] = (
            "none" if "generator/embeddings/word_embeddings" in shapes else "embeddings"
        )
    elif "generator_predictions/output_bias" in shapes:
        values.update(generator_size_fraction=1.0, weight_tying="all")
    return ElectraConfig.from_dict(
        {"model": values, "data": {"sequence_length": min(128, positions)}}
    )


def import_reference_checkpoint(
    path, config: ElectraConfig | None = None, num_heads: int | None = None
):
    """An `ElectraPretrainer` with the weights of a reference (TF1) checkpoint.

    Args:
        path: the checkpoint prefix (`.../model.ckpt-1000000`) or its folder.
        config: the config to build; by default derived from the checkpoint's shapes.
        num_heads: attention heads when deriving the config (default hidden // 64).

    Returns:
        `ElectraPretrainer` (discriminator and generator loaded).
    """
    import tensorflow as tf

    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    path = str(path)
    if Path(path).is_dir():
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ConfigError(f"No TF1 checkpoint in {path}.")
        path = latest
    try:
        reader = tf.train.load_checkpoint(path)
    except (tf.errors.OpError, ValueError) as error:
        raise ConfigError(f"{path} is not a readable checkpoint ({error}).") from None
    shapes = reader.get_variable_to_shape_map()
    if config is None:
        config = _config_from_reference(shapes, num_heads)
    model = ElectraPretrainer(config)
    for name, variable, _ in reference_names(model):
        if name not in shapes:
            raise ConfigError(f"{path}: the checkpoint has no {name}, which this config needs.")
        assign_weight(variable, reader.get_tensor(name), name, path)
    return model
