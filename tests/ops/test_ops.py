"""The ELECTRA math on tiny tensors, with answers worked out by hand."""

import numpy as np
import pytest
import tensorflow as tf

from electra_tf.ops import losses, masking, random, sampling

CLS, SEP, MASK, PAD = 2, 3, 4, 0
SPECIAL = (CLS, SEP, MASK, PAD)


# Random numbers -------------------------------------------------------------------------------


def test_uniforms_are_a_pure_function_of_their_coordinates():
    keys = random.row_keys(seed=7, step=tf.constant(3, tf.int64), stream=1, rows=tf.range(4))
    u = random.uniform(keys, 10).numpy()
    assert u.shape == (4, 10) and u.min() > 0.0 and u.max() < 1.0
    # Row 2 alone draws what it drew among the others: the split of a batch does not matter.
    alone = random.uniform(random.row_keys(7, 3, 1, tf.constant([2])), 10).numpy()
    np.testing.assert_array_equal(alone[0], u[2])
    again = random.uniform(random.row_keys(7, 3, 1, tf.range(4)), 10).numpy()
    np.testing.assert_array_equal(again, u)
    for other in (
        random.row_keys(8, 3, 1, tf.range(4)),
        random.row_keys(7, 4, 1, tf.range(4)),
        random.row_keys(7, 3, 2, tf.range(4)),
    ):
        assert np.mean(random.uniform(other, 10).numpy() == u) < 0.05


def test_uniforms_look_uniform_and_reach_the_extremes_safely():
    u = random.uniform(random.row_keys(1, 0, 0, tf.range(200)), 500).numpy().ravel()
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    hist = np.histogram(u, bins=10, range=(0, 1))[0] / u.size
    assert np.all(np.abs(hist - 0.1) < 0.006)
    assert np.isfinite(-np.log(-np.log(u))).all()
    extremes = random.bits_to_uniform(tf.constant([0, 2**32 - 1], tf.uint32)).numpy()
    np.testing.assert_array_equal(extremes, [2.0**-24, 1 - 2.0**-24])
    assert np.isfinite(-np.log(-np.log(extremes))).all()


def test_large_steps_and_seeds_are_accepted():
    keys = random.row_keys(2**40 + 5, tf.constant(2**35, tf.int64), 3, tf.range(2))
    assert keys.dtype == tf.uint32 and keys.shape == (2,)
    assert not np.array_equal(keys.numpy(), random.row_keys(5, 2**35, 3, tf.range(2)).numpy())


# Masking ---------------------------------------------------------------------------------------


def test_candidates_exclude_specials_and_padding():
    ids = tf.constant([[CLS, 10, MASK, 11, SEP, PAD]])
    mask = tf.constant([[1, 1, 1, 1, 1, 0]])
    np.testing.assert_array_equal(
        masking.candidate_mask(ids, mask, SPECIAL).numpy(),
        [[False, True, False, True, False, False]],
    )


def test_number_to_mask_rounds_caps_and_respects_candidates():
    # Real tokens 10, 16, 13, 2, 0 at rate 0.25: round(2.5)=2 (half to even), round(4.0)=4
    # capped at N=3, round(3.25)=3, round(0.5)=0 -> max(1, .) = 1, and all-padding -> 0.
    lengths = [10, 16, 13, 2, 0]
    mask = tf.sequence_mask(lengths, 16, dtype=tf.int32)
    candidates = tf.cast(mask, tf.bool)
    k = masking.num_to_mask(mask, candidates, mask_rate=0.25, max_predictions=3).numpy()
    np.testing.assert_array_equal(k, [2, 3, 3, 1, 0])
    # A sequence whose only real tokens are [CLS] and [SEP] has no candidates: k = 0.
    only_specials = tf.constant([[False] * 16])
    assert masking.num_to_mask(mask[3:4], only_specials, 0.25, 3).numpy()[0] == 0


def test_select_positions_takes_the_highest_scoring_candidates():
    candidates = tf.constant([[False, True, True, True, False], [False, True, False, False, False]])
    scores = tf.constant([[0.9, 0.2, 0.7, 0.5, 0.8], [0.9, 0.3, 0.6, 0.1, 0.1]])
    k = tf.constant([2, 2])  # row 2 asks for 2 but (by the caller's contract) has 1 candidate
    positions, weights = masking.select_positions(candidates, tf.minimum(k, [3, 1]), scores, 3)
    np.testing.assert_array_equal(positions.numpy(), [[2, 3, 0], [1, 0, 0]])
    np.testing.assert_array_equal(weights.numpy(), [[1, 1, 0], [1, 0, 0]])


def test_replacement_ids_mask_random_or_keep():
    targets = tf.constant([[10, 11, 12, 13]])
    action = tf.constant([[0.05, 0.85, 0.88, 0.95]])
    token = tf.constant([[0.5, 0.5, 0.25, 0.5]])
    electra = masking.replacement_ids(targets, action, token, MASK, 40, 0.85, 0.0)
    np.testing.assert_array_equal(electra.numpy(), [[MASK, 11, 12, 13]])
    bert = masking.replacement_ids(targets, action, token, MASK, 40, 0.8, 0.1)
    # 0.05 < 0.8: [MASK]; 0.85 in [0.8, 0.9): random int(0.5 * 40) = 20; 0.88: int(0.25*40)=10.
    np.testing.assert_array_equal(bert.numpy(), [[MASK, 20, 10, 13]])


def test_mask_batch_end_to_end_on_a_hand_made_batch():
    ids = tf.constant(
        [[CLS, 10, 11, 12, SEP, PAD, PAD, PAD], [CLS, SEP, PAD, PAD, PAD, PAD, PAD, PAD]]
    )
    mask = tf.cast(ids != PAD, tf.int32)
    scores = tf.constant([[0.1, 0.3, 0.9, 0.6, 0.8, 0.7, 0.5, 0.4]] * 2)
    masked = masking.mask_batch(
        ids,
        mask,
        position_scores=scores,
        action_draw=tf.constant([[0.1, 0.9], [0.1, 0.1]]),
        token_draw=tf.zeros([2, 2]),
        special_ids=SPECIAL,
        mask_id=MASK,
        vocabulary_size=20,
        mask_rate=0.4,
        max_predictions=2,
        mask_token_rate=0.85,
        random_token_rate=0.0,
    )
    # Row 1: 5 real tokens * 0.4 = 2 positions: the candidates 1..3 ranked by score -> 2, 3.
    np.testing.assert_array_equal(masked.positions.numpy(), [[2, 3], [0, 0]])
    np.testing.assert_array_equal(masked.weights.numpy(), [[1, 1], [0, 0]])
    np.testing.assert_array_equal(masked.targets.numpy(), [[11, 12], [0, 0]])
    np.testing.assert_array_equal(masked.masked_ids.numpy()[0], [CLS, 10, MASK, 12, SEP, 0, 0, 0])
    np.testing.assert_array_equal(masked.masked_ids.numpy()[1], ids.numpy()[1])  # nothing to mask


def test_masking_rate_and_split_over_many_draws():
    ids = np.full((400, 128), 50, np.int32)
    ids[:, 0], ids[:, -1] = CLS, SEP
    mask = np.ones_like(ids)
    keys = random.row_keys(3, 0, 1, tf.range(400))
    masked = masking.mask_batch(
        ids,
        mask,
        position_scores=random.uniform(keys, 128),
        action_draw=random.uniform(random.row_keys(3, 0, 2, tf.range(400)), 19),
        token_draw=random.uniform(random.row_keys(3, 0, 3, tf.range(400)), 19),
        special_ids=SPECIAL,
        mask_id=MASK,
        vocabulary_size=100,
        mask_rate=0.15,
        max_predictions=19,
        mask_token_rate=0.85,
        random_token_rate=0.0,
    )
    assert masked.weights.numpy().sum(axis=1).tolist() == [19] * 400  # round(0.15 * 128) = 19
    positions = masked.positions.numpy()
    assert positions.min() >= 1 and positions.max() <= 126  # never [CLS] or [SEP]
    assert all(len(set(row)) == 19 for row in positions)  # distinct
    shown = masked.masked_ids.numpy()
    share_masked = np.mean(shown == MASK) * 128 / 19
    assert abs(share_masked - 0.85) < 0.02
    assert set(np.unique(shown)) == {CLS, SEP, MASK, 50}  # no random tokens for ELECTRA


# Gather, scatter, sampling -----------------------------------------------------------------------


def test_gather_positions_per_example():
    seq = tf.constant([[10, 11, 12], [20, 21, 22]])
    np.testing.assert_array_equal(
        sampling.gather_positions(seq, [[2, 0], [1, 1]]).numpy(), [[12, 10], [21, 21]]
    )
    vectors = tf.reshape(tf.range(12), [2, 3, 2])
    np.testing.assert_array_equal(
        sampling.gather_positions(vectors, [[1], [2]]).numpy(), [[[2, 3]], [[10, 11]]]
    )


def test_scatter_ignores_padding_slots_and_last_duplicate_wins():
    seq = tf.constant([[10, 11, 12, 13]])
    out = sampling.scatter_update(
        seq,
        tf.constant([[7, 8, 9, 5]]),
        tf.constant([[1, 3, 1, 0]]),
        tf.constant([[1.0, 1.0, 1.0, 0.0]]),
    )
    # Slot 3 (weight 0) points at position 0 and changes nothing; position 1 is listed twice:
    # the later slot (value 9) wins.
    np.testing.assert_array_equal(out.numpy(), [[10, 9, 12, 8]])
    nothing = sampling.scatter_update(
        seq, tf.constant([[1, 2]]), tf.constant([[0, 0]]), tf.zeros([1, 2])
    )
    np.testing.assert_array_equal(nothing.numpy(), seq.numpy())


def test_gumbel_max_is_argmax_with_flat_noise_and_obeys_options():
    logits = tf.constant([[1.0, 3.0, 2.0], [0.0, -1.0, 5.0]])
    flat = tf.fill([2, 3], 0.5)  # equal noise everywhere: the sample is the argmax
    np.testing.assert_array_equal(sampling.gumbel_max_sample(logits, flat).numpy(), [1, 2])
    # disallow pushes the true token down by 1000: the runner-up is chosen.
    np.testing.assert_array_equal(
        sampling.gumbel_max_sample(logits, flat, disallow=tf.constant([1, 2])).numpy(), [2, 0]
    )
    # Noise for (row 0, id 0) of u = 0.999 adds -log(-log(0.999)) = 6.9: it wins.
    noise = tf.constant([[0.999, 0.5, 0.5], [0.5, 0.5, 0.5]])
    np.testing.assert_array_equal(sampling.gumbel_max_sample(logits, noise).numpy(), [0, 2])
    # A high temperature flattens the logits: 6.9 + 1/10 beats 3/10 + 0.37 easily, as before;
    # a low one sharpens them: 1/0.01 + 6.9 loses to 3/0.01.
    np.testing.assert_array_equal(
        sampling.gumbel_max_sample(logits, noise, temperature=0.01).numpy(), [1, 2]
    )


def test_gumbel_samples_follow_the_softmax():
    logits = tf.constant([[0.0, 1.0, 2.0, -1.0]])
    n = 40000
    noise = random.uniform(random.row_keys(11, 0, 4, tf.range(n)), 4)
    samples = sampling.gumbel_max_sample(tf.tile(logits, [n, 1]), noise).numpy()
    freq = np.bincount(samples, minlength=4) / n
    expected = tf.nn.softmax(logits).numpy()[0]
    np.testing.assert_allclose(freq, expected, atol=0.01)
    hot = sampling.gumbel_max_sample(tf.tile(logits, [n, 1]), noise, temperature=0.5).numpy()
    np.testing.assert_allclose(
        np.bincount(hot, minlength=4) / n, tf.nn.softmax(logits / 0.5).numpy()[0], atol=0.01
    )


def test_vocabulary_blocks_tile_the_row_or_pad_it():
    assert sampling.vocabulary_blocks(30522) == 5087  # 6 x 5,087
    assert sampling.vocabulary_blocks(30000) == 200  # 150 x 200
    assert sampling.vocabulary_blocks(97) == 97  # prime, one block
    assert sampling.vocabulary_blocks(65537) == 257  # prime, padded to 256 x 257


def test_block_argmax_is_argmax_with_first_maximum_on_ties():
    rng = np.random.default_rng(3)
    for vocabulary in (5, 97, 30000, 65537):  # one block, one prime block, tiled, padded
        logits = tf.constant(rng.integers(-3, 4, size=(4, 3, vocabulary)).astype("float32"))
        np.testing.assert_array_equal(
            sampling.block_argmax(logits).numpy(), tf.argmax(logits, axis=-1).numpy()
        )
    tie = np.full([1, 30000], -1.0, "float32")
    tie[0, [7, 299, 20000]] = 2.0  # maxima in three blocks: the first wins
    assert int(sampling.block_argmax(tf.constant(tie))[0]) == 7


def test_inverse_cdf_sample_inverts_the_cdf_by_hand():
    # p = (1/8, 3/8, 4/8, 0): u below 1/8 gives 0, below 1/2 gives 1, else 2; never 3
    logits = tf.math.log(tf.constant([[1.0, 3.0, 4.0, 0.0]]))
    for u, expected in [(0.0, 0), (0.124, 0), (0.126, 1), (0.49, 1), (0.51, 2), (0.9999999, 2)]:
        assert int(sampling.inverse_cdf_sample(logits, tf.constant([u]))[0]) == expected, u
    # disallow lowers the true token by 1000: u = 0.3 then falls in id 2's share (4/5)
    ids = sampling.inverse_cdf_sample(logits, tf.constant([0.3]), disallow=tf.constant([1]))
    assert int(ids[0]) == 2
    # a zero-mass tail at the end of a padded block is never drawn, even at u -> 1
    tail = np.full([1, 65537], -1e4, "float32")
    tail[0, 40000] = 0.0
    assert int(sampling.inverse_cdf_sample(tf.constant(tail), tf.constant([0.9999999]))[0]) == 40000


def test_inverse_cdf_samples_follow_the_softmax():
    n = 40000
    uniforms = random.uniform(random.row_keys(11, 0, 4, tf.range(n)), 1)[:, 0]
    logits = tf.constant([[0.0, 1.0, 2.0, -1.0]])
    samples = sampling.inverse_cdf_sample(tf.tile(logits, [n, 1]), uniforms).numpy()
    np.testing.assert_allclose(
        np.bincount(samples, minlength=4) / n, tf.nn.softmax(logits).numpy()[0], atol=0.01
    )
    hot = sampling.inverse_cdf_sample(tf.tile(logits, [n, 1]), uniforms, temperature=0.5)
    np.testing.assert_allclose(
        np.bincount(hot.numpy(), minlength=4) / n,
        tf.nn.softmax(logits / 0.5).numpy()[0],
        atol=0.01,
    )
    # Across blocks and slices (30,000 = 150 x 200): the mass of each block of 200 ids, from
    # 5,000 draws (a block's mass is at most 0.03: standard error 0.0024, a quarter of atol);
    # 40,000 rows of 30,000 logits would hold 15 GB of intermediates.
    wide = tf.constant(np.random.default_rng(5).normal(size=(1, 30000)).astype("float32") * 2)
    rows = 5000
    drawn = sampling.inverse_cdf_sample(tf.tile(wide, [rows, 1]), uniforms[:rows]).numpy()
    per_block = np.bincount(drawn // 200, minlength=150) / rows
    expected = tf.nn.softmax(wide).numpy()[0].reshape(150, 200).sum(axis=1)
    np.testing.assert_allclose(per_block, expected, atol=0.01)


def test_corrupt_labels_only_changed_tokens():
    ids = tf.constant([[CLS, 10, 11, 12, SEP]])
    positions = tf.constant([[1, 3, 0]])
    weights = tf.constant([[1.0, 1.0, 0.0]])
    samples = tf.constant([[15, 12, 99]])  # position 3 sampled its own token: real
    corrupted, labels = sampling.corrupt(ids, positions, weights, samples)
    np.testing.assert_array_equal(corrupted.numpy(), [[CLS, 15, 11, 12, SEP]])
    np.testing.assert_array_equal(labels.numpy(), [[0, 1, 0, 0, 0]])


# Losses ----------------------------------------------------------------------------------------


def test_sparse_softmax_cross_entropy_equals_tensorflows_in_value_and_gradient():
    rng = np.random.default_rng(2)
    for vocabulary in (5, 97, 30522):
        logits = tf.constant(rng.normal(size=(3, 4, vocabulary)).astype("float32") * 4)
        labels = tf.constant(rng.integers(0, vocabulary, size=(3, 4)).astype("int32"))
        weights = tf.reshape(tf.range(12.0), [3, 4])  # a different upstream per row
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(logits)
            ours = losses.sparse_softmax_cross_entropy(logits, labels)
            theirs = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            ours_sum, theirs_sum = tf.reduce_sum(ours * weights), tf.reduce_sum(theirs * weights)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(
            tape.gradient(ours_sum, logits).numpy(),
            tape.gradient(theirs_sum, logits).numpy(),
            atol=1e-6,
        )
    with pytest.raises(tf.errors.InvalidArgumentError):  # a label outside [0, V)
        losses.sparse_softmax_cross_entropy(tf.zeros([1, 3]), tf.constant([3]))


def test_masked_lm_loss_by_hand():
    logits = tf.constant([[[0.0, np.log(3.0)], [2.0, 2.0]]])  # p = (1/4, 3/4) and (1/2, 1/2)
    targets = tf.constant([[1, 0]])
    loss, per = losses.masked_lm_loss(logits, targets, tf.constant([[1.0, 1.0]]))
    np.testing.assert_allclose(per.numpy(), [[-np.log(0.75), np.log(2.0)]], rtol=1e-6)
    np.testing.assert_allclose(loss.numpy(), (-np.log(0.75) + np.log(2.0)) / (2 + 1e-6), rtol=1e-6)
    padded, _ = losses.masked_lm_loss(logits, targets, tf.constant([[1.0, 0.0]]))
    np.testing.assert_allclose(padded.numpy(), -np.log(0.75) / (1 + 1e-6), rtol=1e-6)
    shared, _ = losses.masked_lm_loss(logits, targets, tf.constant([[1.0, 1.0]]), normalizer=4.0)
    np.testing.assert_allclose(shared.numpy(), (-np.log(0.75) + np.log(2.0)) / 4, rtol=1e-6)
    empty, _ = losses.masked_lm_loss(logits, targets, tf.zeros([1, 2]))
    assert float(empty) == 0.0  # no masked position: 0, not NaN


def test_discriminator_loss_by_hand():
    logits = tf.constant([[0.0, 2.0, -1.0, 5.0]])
    labels = tf.constant([[1, 0, 0, 1]])
    weights = tf.constant([[1.0, 1.0, 1.0, 0.0]])  # the last token is padding
    loss, per = losses.discriminator_loss(logits, labels, weights)
    by_hand = [np.log(2.0), np.log(1 + np.exp(2.0)), np.log(1 + np.exp(-1.0))]
    np.testing.assert_allclose(per.numpy()[0, :3], by_hand, rtol=1e-6)
    np.testing.assert_allclose(loss.numpy(), sum(by_hand) / (3 + 1e-6), rtol=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_math_runs_in_graph_and_xla(jit):
    @tf.function(jit_compile=jit)
    def run(ids, mask):
        keys = random.row_keys(1, tf.constant(2, tf.int64), 1, tf.range(2))
        m = masking.mask_batch(
            ids,
            mask,
            position_scores=random.uniform(keys, 8),
            action_draw=tf.fill([2, 2], 0.1),
            token_draw=tf.zeros([2, 2]),
            special_ids=SPECIAL,
            mask_id=MASK,
            vocabulary_size=20,
            mask_rate=0.3,
            max_predictions=2,
            mask_token_rate=0.85,
            random_token_rate=0.0,
        )
        samples = sampling.gumbel_max_sample(tf.zeros([2, 2, 20]), tf.fill([2, 2, 20], 0.5))
        return sampling.corrupt(ids, m.positions, m.weights, samples)

    ids = tf.constant([[CLS, 10, 11, 12, 13, 14, SEP, PAD]] * 2)
    corrupted, labels = run(ids, tf.cast(ids != PAD, tf.int32))
    assert int(tf.reduce_sum(labels)) == 4  # 2 per row, each replaced by id 0 (differs)


def test_cross_entropy_keeps_its_value_at_large_and_equal_logits():
    # 97 equal logits: -log(1/97) = ln 97, whatever their value (the old sum lost it at -1e30).
    for value in (0.0, -1e30, 1e30, 3e38):
        ours = losses.sparse_softmax_cross_entropy(tf.fill([1, 97], value), tf.constant([3]))
        assert abs(float(ours[0]) - np.log(97.0)) < 1e-6, value
    # Shifting every logit leaves the float32 loss of the shifted (rounded) logits, as
    # TensorFlow's op computes it (the old sum was 10.3 off at a shift of 1e9).
    rng = np.random.default_rng(0)
    base = rng.normal(scale=3.0, size=(8, 97)).astype(np.float32)
    labels = rng.integers(0, 97, size=8)
    for shift in (1e4, 1e9, -1e9, 1e30):
        logits = tf.constant(base + np.float32(shift))
        ours = losses.sparse_softmax_cross_entropy(logits, labels)
        theirs = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-5)
