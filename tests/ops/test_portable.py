"""The portable `keras.ops` forms equal TensorFlow's fast forms, function by function.

Both run here on the TensorFlow backend: the fast form by default, the portable form
inside `backend.portable()`, the switch every module consults. The other backends run
the portable forms; tests/pretraining/test_backends.py checks them there.
"""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.ops import backend, losses, masking, portable, random, sampling


def _both(function, *args, **kwargs):
    """`function` on its fast path and on its portable path, as numpy."""
    fast = function(*args, **kwargs)
    with backend.portable():
        slow = function(*args, **kwargs)
    return tf.nest.map_structure(np.asarray, (fast, slow))


def test_the_switch():
    assert backend.name() == "tensorflow" and backend.tensorflow_fast_paths()
    with backend.portable():
        assert not backend.tensorflow_fast_paths()
        with backend.portable():
            assert not backend.tensorflow_fast_paths()
    assert backend.tensorflow_fast_paths()


@pytest.mark.parametrize("step", [0, 3, 2**31 + 17, 2**35])
def test_random_bits_are_identical(step):
    rows = tf.constant([0, 1, 2, 1000, 2**30], tf.int32)
    fast, slow = _both(random.row_keys, 2**40 + 5, tf.constant(step, tf.int64), 3, rows)
    np.testing.assert_array_equal(fast, slow)
    fast, slow = _both(random.uniform, tf.constant(fast), 37)
    np.testing.assert_array_equal(fast, slow)
    # A worked value: the key of row 0 hashes seed, step, stream and row in that order.
    assert slow.shape == (5, 37) and slow.min() > 0 and slow.max() < 1


def test_fmix32_matches_a_numpy_murmur_finalizer():
    def murmur(h):
        h = np.uint64(h)
        for shift, multiplier in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
            h = (h ^ (h >> np.uint64(shift))) * np.uint64(multiplier) % np.uint64(2**32)
        return int(h ^ (h >> np.uint64(16)))

    words = [0, 1, 0x9E3779B9, 2**32 - 1, 123456789]
    got = np.asarray(portable.fmix32(tf.constant(words, tf.uint32)))
    assert [int(x) for x in got] == [murmur(w) for w in words]


def _masking_inputs():
    rng = np.random.default_rng(3)
    ids = rng.integers(5, 50, size=(3, 12)).astype("int32")
    lengths = np.array([12, 7, 3])
    mask = (np.arange(12)[None, :] < lengths[:, None]).astype("int32")
    ids[:, 0] = 2
    ids[np.arange(3), lengths - 1] = 3
    return tf.constant(ids * mask), tf.constant(mask), rng


def test_masking_gather_scatter_and_corruption_are_identical():
    ids, mask, rng = _masking_inputs()
    draws = {
        "position_scores": tf.constant(rng.random((3, 12)), tf.float32),
        "action_draw": tf.constant(rng.random((3, 4)), tf.float32),
        "token_draw": tf.constant(rng.random((3, 4)), tf.float32),
    }
    options = dict(special_ids=(2, 3, 4, 0), mask_id=4, vocabulary_size=50, mask_rate=0.3,
                   max_predictions=4, mask_token_rate=0.8, random_token_rate=0.1)  # fmt: skip
    fast, slow = _both(masking.mask_batch, ids, mask, **draws, **options)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    positions, weights = tf.constant(fast[1]), tf.constant(fast[3])
    hidden = tf.constant(rng.normal(size=(3, 12, 5)), tf.float32)
    np.testing.assert_array_equal(*_both(sampling.gather_positions, hidden, positions))
    samples = tf.constant(rng.integers(5, 50, size=(3, 4)), tf.int32)
    fast, slow = _both(sampling.corrupt, ids, positions, weights, samples)
    np.testing.assert_array_equal(fast[0], slow[0])
    np.testing.assert_array_equal(fast[1], slow[1])
    # A repeated position: the last used slot wins on both paths.
    repeated = tf.constant([[1, 1, 2, 1]] * 3)
    used = tf.constant([[1.0, 1.0, 1.0, 0.0]] * 3)
    fast, slow = _both(sampling.scatter_update, ids, samples, repeated, used)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(slow[:, 1], np.asarray(samples)[:, 1])


@pytest.mark.parametrize("vocabulary", [131, 30522])
def test_sampling_and_argmax_are_identical(vocabulary):
    rng = np.random.default_rng(vocabulary)
    logits = tf.constant(rng.normal(scale=3.0, size=(2, 5, vocabulary)), tf.float32)
    uniforms = tf.constant(rng.random((2, 5)), tf.float32)
    disallow = tf.constant(rng.integers(0, vocabulary, size=(2, 5)), tf.int32)
    for temperature, banned in ((1.0, None), (0.7, disallow)):
        fast, slow = _both(sampling.inverse_cdf_sample, logits, uniforms, temperature, banned)
        np.testing.assert_array_equal(fast, slow)
    noise = tf.constant(rng.random((2, 5, vocabulary)) * 0.998 + 0.001, tf.float32)
    fast, slow = _both(sampling.gumbel_max_sample, logits, noise, 1.0, disallow)
    np.testing.assert_array_equal(fast, slow)
    fast, slow = _both(sampling.block_argmax, logits)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(slow, np.argmax(np.asarray(logits), -1))


def test_losses_and_their_gradients_are_equal():
    rng = np.random.default_rng(5)
    logits = tf.constant(rng.normal(scale=4.0, size=(2, 3, 40)).astype("float32"))
    targets = tf.constant(rng.integers(0, 40, size=(2, 3)), tf.int32)
    weights = tf.constant([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    token_logits = tf.constant(rng.normal(scale=30.0, size=(2, 6)).astype("float32"))
    labels = tf.constant(rng.integers(0, 2, size=(2, 6)), tf.int32)
    token_weights = tf.constant([[1.0] * 6, [1.0] * 4 + [0.0] * 2])

    def losses_and_gradients():
        with tf.GradientTape() as tape:
            tape.watch([logits, token_logits])
            mlm, per_slot = losses.masked_lm_loss(logits, targets, weights)
            detection, per_token = losses.discriminator_loss(token_logits, labels, token_weights)
            total = mlm + 50.0 * detection
        return [total, per_slot, per_token, *tape.gradient(total, [logits, token_logits])]

    fast, slow = _both(losses_and_gradients)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    # A worked value: equal logits give ln V at every slot.
    with backend.portable():
        flat = losses.sparse_softmax_cross_entropy(tf.fill([2, 97], -1e30), tf.constant([0, 5]))
    np.testing.assert_allclose(np.asarray(flat), [np.log(97.0)] * 2, rtol=1e-6)


def test_copy_mixture_loss_and_its_gradients_are_equal():
    rng = np.random.default_rng(11)
    vocab_logits = tf.constant(rng.normal(scale=3.0, size=(2, 5, 9)).astype("float32"))
    copy_logits = tf.constant(rng.normal(scale=2.0, size=(2, 5)).astype("float32"))
    inputs = tf.constant(rng.integers(0, 9, size=(2, 5)), tf.int32)
    targets = tf.where(tf.constant([[1, 0, 1, 1, 0], [0, 1, 1, 0, 1]]) > 0, inputs, 8 - inputs)
    weights = tf.constant([[1.0] * 5, [1.0] * 3 + [0.0] * 2])

    def loss_and_gradients():
        with tf.GradientTape() as tape:
            tape.watch([vocab_logits, copy_logits])
            loss, per_token, predictions = losses.copy_mixture_loss(
                vocab_logits, copy_logits, inputs, targets, weights
            )
        return [loss, per_token, predictions, *tape.gradient(loss, [vocab_logits, copy_logits])]

    fast, slow = _both(loss_and_gradients)
    np.testing.assert_array_equal(fast[2], slow[2])
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    # A worked value (tests/pretraining/test_objectives.py): q = [1/4, 3/4], D = 1/2, input =
    # target 0: -log(D + (1 - D) q(0)) = -log(5/8); the copy wins the argmax there.
    with backend.portable():
        loss, per_token, predictions = losses.copy_mixture_loss(
            tf.constant([[[0.0, np.log(3.0)]]]), tf.constant([[0.0]]), [[0]], [[0]], [[1.0]]
        )
    np.testing.assert_allclose(np.asarray(per_token), [[-np.log(5 / 8)]], rtol=1e-6)
    assert np.asarray(predictions).tolist() == [[0]]
