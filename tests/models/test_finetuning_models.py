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
