"""The discriminator's encoder as a keras-hub `ElectraBackbone` preset, and back.

keras-hub 0.32's `ElectraBackbone` has the same layers as this package's
encoder, with two differences that change outputs:

- it uses tanh-approximate GELU where ELECTRA uses the exact (erf) form, so its
  `sequence_output` differs slightly on the same weights (measured by
  `compare_with_keras_hub`; see the README);
- it adds a `pooled_dense` (dense + tanh) on [CLS]; ELECTRA has no pooler. A
  written preset sets it to the identity, so its `pooled_output` is
  tanh([CLS] vector).

The replaced-token-detection head has no place in a backbone preset and is
not written; `read_keras_hub_preset` returns an encoder.
"""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np

from electra_tf.io.durable import publishing
from electra_tf.models.encoder import ElectraEncoder

__all__ = [
    "to_keras_hub_backbone",
    "write_keras_hub_preset",
    "read_keras_hub_preset",
    "compare_with_keras_hub",
]


def _encoder(model) -> ElectraEncoder:
    if isinstance(model, ElectraEncoder):
        return model
    return getattr(model, "discriminator", model).encoder


def _pairs(encoder, backbone):
    """(ours, keras-hub's) weight pairs, in one order."""
    emb = encoder.embeddings
    pairs = [
        (emb.token_embedding.embeddings, backbone.token_embedding.embeddings),
        (emb.position_embedding.embeddings, backbone.position_embedding.position_embeddings),
        (emb.segment_embedding.embeddings, backbone.segment_embedding.embeddings),
        (emb.layer_norm.gamma, backbone.embeddings_layer_norm.gamma),
        (emb.layer_norm.beta, backbone.embeddings_layer_norm.beta),
    ]
    if encoder.embeddings_project is not None:
        pairs += [
            (encoder.embeddings_project.kernel, backbone.embeddings_projection.kernel),
            (encoder.embeddings_project.bias, backbone.embeddings_projection.bias),
        ]
    for ours, theirs in zip(encoder.transformer_layers, backbone.transformer_layers, strict=True):
        pairs += list(zip(ours.weights, theirs.weights, strict=True))
    return pairs


def to_keras_hub_backbone(model):
    """A `keras_hub.models.ElectraBackbone` holding the encoder's weights (float32)."""
    import keras_hub

    encoder = _encoder(model)
    if not encoder.built:
        encoder.build()
    backbone = keras_hub.models.ElectraBackbone(
        vocab_size=encoder.vocabulary_size,
        num_layers=encoder.num_layers,
        num_heads=encoder.num_heads,
        hidden_dim=encoder.hidden_dim,
        embedding_dim=encoder.embedding_dim,
        intermediate_dim=encoder.intermediate_dim,
        dropout=encoder.dropout,
        max_sequence_length=encoder.max_sequence_length,
        num_segments=encoder.num_segments,
        dtype="float32",
    )
    for ours, theirs in _pairs(encoder, backbone):
        theirs.assign(np.asarray(ours.numpy(), np.float32))
    backbone.pooled_dense.kernel.assign(np.eye(encoder.hidden_dim, dtype=np.float32))
    backbone.pooled_dense.bias.assign(np.zeros(encoder.hidden_dim, np.float32))
    return backbone


def write_keras_hub_preset(model, preset_dir, *, vocab_file, lower_case: bool = True) -> Path:
    """Writes a preset folder that `keras_hub.models.ElectraBackbone.from_preset` loads offline."""
    import keras_hub

    preset_dir = Path(preset_dir)
    backbone = to_keras_hub_backbone(model)
    vocabulary = Path(vocab_file).read_text(encoding="utf-8").splitlines()
    tokenizer = keras_hub.models.ElectraTokenizer(vocabulary=vocabulary, lowercase=lower_case)
    with publishing(preset_dir) as scratch:  # synced and renamed into place; removed on error
        backbone.save_to_preset(str(scratch))
        tokenizer.save_to_preset(str(scratch))
    return preset_dir


def read_keras_hub_preset(preset_dir, dropout: float | None = None) -> ElectraEncoder:
    """An `ElectraEncoder` (exact GELU) with the weights of a keras-hub ElectraBackbone preset."""
    import keras_hub

    from electra_tf.layers.initializers import draws_skipped

    backbone = keras_hub.models.ElectraBackbone.from_preset(str(preset_dir))
    with draws_skipped():  # every weight is set from the backbone below
        encoder = _preset_encoder(backbone, dropout)
    pairs = _pairs(encoder, backbone)
    if {id(w) for w, _ in pairs} != {id(w) for w in encoder.weights}:
        raise ValueError(
            f"{preset_dir}: its ElectraBackbone does not give every weight of this package's "
            "encoder; write the preset with `electra-tf export --format keras-hub`."
        )
    for ours, theirs in pairs:
        ours.assign(theirs.numpy())
    return encoder


def _preset_encoder(backbone, dropout) -> ElectraEncoder:
    """An `ElectraEncoder` of the backbone's sizes, built."""
    encoder = ElectraEncoder(
        vocabulary_size=backbone.vocab_size,
        num_layers=backbone.num_layers,
        hidden_dim=backbone.hidden_dim,
        embedding_dim=backbone.embedding_dim,
        num_heads=backbone.num_heads,
        intermediate_dim=backbone.intermediate_dim,
        max_sequence_length=backbone.max_sequence_length,
        num_segments=backbone.num_segments,
        dropout=backbone.dropout if dropout is None else dropout,
        name="encoder",
    )
    encoder.build()
    return encoder


def compare_with_keras_hub(model, inputs) -> dict:
    """Largest absolute differences between this encoder and the keras-hub backbone on `inputs`."""
    encoder = _encoder(model)
    backbone = to_keras_hub_backbone(encoder)
    ours = np.asarray(encoder(inputs, training=False))
    theirs = backbone(
        {k: keras.ops.convert_to_tensor(v) for k, v in inputs.items()}, training=False
    )
    mask = np.asarray(inputs["padding_mask"]).astype(bool)
    sequence = np.abs(ours - np.asarray(theirs["sequence_output"]))[mask]
    pooled = np.abs(np.tanh(ours[:, 0]) - np.asarray(theirs["pooled_output"]))
    return {
        "sequence_output_max_abs_diff": float(sequence.max()),
        "sequence_output_mean_abs_diff": float(sequence.mean()),
        "pooled_output_max_abs_diff": float(pooled.max()),
        "sequence_output_max_abs": float(np.abs(ours[mask]).max()),
    }
