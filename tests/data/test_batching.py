"""Batches padded to their longest row, grouped by length, in an order fixed by seed and epoch."""

import numpy as np

from electra_tf.data.batching import batch_dataset, epoch_batches, ordered_batches, pad_batch


def _features(lengths, width=16):
    ids = np.zeros((len(lengths), width), np.int32)
    for row, length in enumerate(lengths):
        ids[row, :length] = np.arange(2, 2 + length)
    return {"token_ids": ids, "padding_mask": (ids > 0).astype(np.int32), "segment_ids": 0 * ids}


def test_an_epoch_covers_every_row_once_in_an_order_fixed_by_seed_and_epoch():
    lengths = np.random.default_rng(0).integers(1, 100, size=103)
    batches = epoch_batches(lengths, 8, seed=3, epoch=2)
    assert len(batches) == 13  # ceil(103 / 8)
    assert sorted(np.concatenate(batches).tolist()) == list(range(103))
    same = epoch_batches(lengths, 8, seed=3, epoch=2)
    assert all(np.array_equal(a, b) for a, b in zip(batches, same))
    other = np.concatenate(epoch_batches(lengths, 8, seed=3, epoch=3))
    assert not np.array_equal(np.concatenate(batches), other)


def test_grouping_by_length_cuts_padding_and_keeps_batches_mixed():
    lengths = np.random.default_rng(1).integers(1, 128, size=4000)

    def padded(batches):
        return sum(len(b) * lengths[b].max() for b in batches) / lengths.sum()

    grouped = epoch_batches(lengths, 32, seed=0, epoch=0, group=50)
    plain = epoch_batches(lengths, 32, seed=0, epoch=0, group=0)
    # Uniform lengths 1..127: a random batch of 32 is padded to about 123, 1.9x the mean
    # of 64; sorted groups of 1,600 leave about 2 tokens of spread per batch.
    assert padded(plain) > 1.8 and padded(grouped) < 1.05
    # Batches still come from all over the data: consecutive batches' lengths are not sorted.
    firsts = [lengths[b].min() for b in grouped]
    assert not (np.all(np.diff(firsts) >= 0) or np.all(np.diff(firsts) <= 0))


def test_a_batch_is_cut_to_its_longest_row_rounded_up():
    features = _features([3, 9, 2, 16])
    lengths = np.array([3, 9, 2, 16])
    assert pad_batch(features, [0, 2], lengths)["token_ids"].shape == (2, 3)
    assert pad_batch(features, [0, 2], lengths, multiple=8)["token_ids"].shape == (2, 8)
    assert pad_batch(features, [1, 2], lengths, multiple=8)["token_ids"].shape == (2, 16)
    cut = pad_batch(features, [1], lengths, multiple=2)["token_ids"]
    assert cut.tolist() == [[2, 3, 4, 5, 6, 7, 8, 9, 10, 0]]
    order = np.concatenate(ordered_batches(lengths, 2))
    assert order.tolist() == [2, 0, 1, 3]


def test_the_dataset_keeps_targets_with_their_rows_over_several_epochs():
    lengths = [5, 12, 3, 7, 9, 2, 14]
    features = _features(lengths)
    per_token = features["token_ids"] * 10
    dataset = batch_dataset(
        features,
        {"row": np.arange(7), "tokens": per_token},
        batch_size=3,
        seed=5,
        epochs=range(1, 3),
        group=1,
        multiple=8,
    )
    assert int(dataset.cardinality()) == 6  # known, so Keras counts steps without a pass
    # One spec for every width and the last, smaller batch: one trace of the train step.
    assert dataset.element_spec[0]["token_ids"].shape.as_list() == [None, None]
    assert dataset.element_spec[1]["row"].shape.as_list() == [None]
    seen = []
    for inputs, targets in dataset.as_numpy_iterator():
        width = inputs["token_ids"].shape[1]
        assert width % 8 == 0 and targets["tokens"].shape[1] == width
        np.testing.assert_array_equal(targets["tokens"], inputs["token_ids"] * 10)
        np.testing.assert_array_equal(
            inputs["token_ids"], features["token_ids"][targets["row"], :width]
        )
        np.testing.assert_array_equal(
            inputs["padding_mask"],
            pad_batch(features, targets["row"], np.asarray(lengths), 8)["padding_mask"],
        )
        seen.append(targets["row"])
    assert len(seen) == 6  # 2 epochs of ceil(7 / 3)
    assert sorted(np.concatenate(seen[:3]).tolist()) == list(range(7))
    expected = epoch_batches(np.asarray(lengths), 3, seed=5, epoch=2, group=1)
    assert [b.tolist() for b in seen[3:]] == [b.tolist() for b in expected]
