"""The fine-tuning heads: a dense layer on [CLS], span heads that never pick padding."""

import keras
import numpy as np
import pytest
from helpers import FINETUNE_ENCODER

from electra_tf.models.encoder import ElectraEncoder
from electra_tf.tasks.classifier import ElectraClassifier
from electra_tf.tasks.span_extractor import ElectraSpanExtractor


def _inputs(batch=2, length=6):
    ids = np.tile(np.arange(5, 5 + length, dtype=np.int32), (batch, 1))
    ids[:, 0] = 2
    mask = np.ones_like(ids)
    mask[1, 4:] = 0
    return {"token_ids": ids, "padding_mask": mask, "segment_ids": np.zeros_like(ids)}


def test_classifier_is_dense_on_the_cls_vector_and_regression_squeezes():
    encoder = ElectraEncoder(**FINETUNE_ENCODER)
    model = ElectraClassifier(encoder, num_outputs=3)
    x = _inputs()
    logits = np.asarray(model(x, training=False))
    cls = np.asarray(encoder(x, training=False))[:, 0]
    expected = cls @ model.output_dense.kernel.numpy() + model.output_dense.bias.numpy()
    np.testing.assert_allclose(logits, expected, atol=1e-6)
    regression = ElectraClassifier(encoder, num_outputs=1)
    assert tuple(regression(x).shape) == (2,)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(np.array([0, 2]), logits)
    by_hand = np.mean([-np.log(np.exp(r[t]) / np.exp(r).sum()) for r, t in zip(logits, (0, 2))])
    assert float(loss) == pytest.approx(by_hand, rel=1e-5)


def test_span_heads_mask_padding_and_joint_head_pairs_starts_with_ends():
    encoder = ElectraEncoder(**FINETUNE_ENCODER)
    plain = ElectraSpanExtractor(encoder)
    out = plain(_inputs())
    assert tuple(out["start_logits"].shape) == (2, 6) and tuple(out["answerable_logits"].shape) == (
        2,
    )
    assert np.all(np.asarray(out["end_logits"])[1, 4:] < -1000)  # padding can never be chosen
    joint = ElectraSpanExtractor(encoder, joint_end=True, beam_size=3)
    trained = joint({**_inputs(), "start_positions": np.array([1, 2], np.int32)})
    assert tuple(trained["end_logits"].shape) == (2, 6)
    inferred = joint(_inputs())
    assert tuple(inferred["end_logits"].shape) == (2, 3, 6)
    starts = np.asarray(inferred["start_candidates"])
    # The beam's first end row equals the end logits given that start.
    given = joint({**_inputs(), "start_positions": starts[:, 0]})
    np.testing.assert_allclose(
        np.asarray(inferred["end_logits"])[:, 0], np.asarray(given["end_logits"]), atol=1e-5
    )


def test_the_first_position_pass_equals_the_full_pass_and_its_gradients():
    """`first_position_only`: the last block computes position 0 alone, `[B, 1, H]`, equal to
    the full pass's first row (a masked first position included), and every weight gets
    the same gradient through it (dropout off, so both passes are deterministic)."""
    import tensorflow as tf

    encoder = ElectraEncoder(**{**FINETUNE_ENCODER, "dropout": 0.0})
    x = _inputs(batch=3, length=7)
    x["padding_mask"][2, 0] = 0
    full = np.asarray(encoder(x, training=True))
    first = np.asarray(encoder(x, training=True, first_position_only=True))
    assert first.shape == (3, 1, encoder.hidden_dim)
    np.testing.assert_allclose(first[:, 0], full[:, 0], atol=1e-6)
    assert np.abs(full[:, 1:] - full[:, :1]).max() > 1e-3  # the other rows differ from it
    target = np.random.default_rng(0).normal(size=(3, encoder.hidden_dim)).astype("float32")
    gradients = []
    for only in (False, True):
        with tf.GradientTape() as tape:
            out = encoder(x, training=True, first_position_only=only)[:, 0]
            loss = tf.reduce_sum((out - target) ** 2)
        gradients.append(tape.gradient(loss, encoder.trainable_variables))
    for a, b, v in zip(*gradients, encoder.trainable_variables):
        np.testing.assert_allclose(
            tf.convert_to_tensor(a), tf.convert_to_tensor(b), rtol=1e-5, atol=1e-5, err_msg=v.path
        )


_BATCHED = ("Einsum", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")


def _contracted_sizes(op):
    """The static sizes a batched matmul or einsum op sums over (None where unknown)."""
    shapes = [t.shape for t in op.inputs]
    if op.type == "Einsum":
        inputs, output = op.get_attr("equation").decode().split("->")
        left, right = inputs.split(",")
        return [shapes[0][left.index(c)] for c in left if c in right and c not in output]
    return [shapes[0][-2 if op.get_attr("adj_x") else -1]]


def test_a_classifiers_training_step_holds_no_product_over_a_dimension_of_one():
    """The first-position pass's attention is elementwise products summed, so no batched
    matmul or einsum of a classifier's training step (its gradients included) sums over a
    length of 1, the form TensorFlow 2.20's oneDNN was caught overrunning its buffers on
    (AVX-512). 2-D products run oneDNN's other matmul path and are not implicated: a
    one-unit head's input gradient sums over its one unit in every QA run."""
    import tensorflow as tf

    model = ElectraClassifier(ElectraEncoder(**FINETUNE_ENCODER), num_outputs=3)
    x = _inputs(batch=3, length=7)
    model(x)

    @tf.function
    def step(inputs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(inputs, training=True) ** 2)
        return tape.gradient(loss, model.trainable_variables)

    graph = step.get_concrete_function({k: tf.constant(v) for k, v in x.items()}).graph
    products = [op for op in graph.get_operations() if op.type in _BATCHED]
    assert len(products) >= 6  # the first block's attention and its gradients
    over_one = [(op.type, op.name) for op in products if 1 in _contracted_sizes(op)]
    assert over_one == []
