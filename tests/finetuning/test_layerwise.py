"""Layer-wise learning-rate decay, rates worked out by hand."""

import numpy as np
from helpers import FINETUNE_ENCODER

from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.classifier import ElectraClassifier
from electra_tf.tasks.optimizer import LayerwiseAdamW, layerwise_multipliers


def test_layerwise_rates_for_a_two_layer_model_by_hand():
    model = ElectraClassifier(
        ElectraEncoder(**{**FINETUNE_ENCODER, "embedding_dim": 4}), num_outputs=2
    )
    model.build()
    decay = 0.5
    paper = layerwise_multipliers(model, decay)
    reference = layerwise_multipliers(model, decay, reference=True)
    enc = model.encoder
    groups = {
        "embeddings": (
            enc.embeddings.trainable_variables + enc.embeddings_project.trainable_variables,
            0.125,
            0.0625,
        ),
        "layer_0": (enc.transformer_layers[0].trainable_variables, 0.25, 0.125),
        "layer_1": (enc.transformer_layers[1].trainable_variables, 0.5, 0.25),
        "head": (model.output_dense.trainable_variables, 1.0, 1.0),
    }
    for name, (variables, paper_rate, reference_rate) in groups.items():
        for v in variables:
            assert paper[id(v)] == paper_rate, name
            assert reference[id(v)] == reference_rate, name
    assert set(paper) == {id(v) for v in model.trainable_variables}


def test_layerwise_optimizer_scales_each_update():
    model = ElectraClassifier(ElectraEncoder(**FINETUNE_ENCODER), num_outputs=2)
    model.build()
    multipliers = layerwise_multipliers(model, 0.5)
    optimizer = LayerwiseAdamW(
        multipliers=multipliers,
        learning_rate=0.1,
        weight_decay=0.0,
        clip_norm=0.0,
        bias_correction=False,
        beta_1=0.0,
        beta_2=0.0,
        epsilon=1e-12,
    )
    before = [v.numpy().copy() for v in model.trainable_variables]
    grads = [np.ones(v.shape, "float32") for v in model.trainable_variables]
    optimizer.apply(grads, model.trainable_variables)
    # With beta 0 and no bias correction, each step is lr * multiplier * sign(g).
    for b, v in zip(before, model.trainable_variables):
        np.testing.assert_allclose(b - v.numpy(), 0.1 * multipliers[id(v)], rtol=1e-5)
