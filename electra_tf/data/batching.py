"""Batches of packed rows padded to their own longest row, grouped by length, epoch by epoch.

Fine-tuning text is short next to the model's maximum length (movie-review
snippets average about 25 WordPieces against 128), so padding every batch to
the maximum spends most of a step on padding. Here rows are packed once at the
maximum length; each batch is cut to its longest row (rounded up to a multiple
of `multiple`, so that only a few distinct shapes reach the model). With
`group=G`, an epoch's shuffled rows are cut into groups of `G` batches, each
group sorted by length before it is cut into batches, and the batches shuffled
again (Hugging Face's `group_by_length` does the same with groups of 50): rows
of similar length share a batch and padding nearly vanishes, while every batch
still mixes rows from all over the data. `group=0` keeps plain shuffled batches.

The order of epoch `e` depends only on `(seed, e)`, so a run resumed at epoch
`e` sees the batches an uninterrupted run would have seen.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

__all__ = ["epoch_batches", "pad_batch", "batch_dataset", "ordered_batches", "row_lengths"]


def row_lengths(padding_mask) -> np.ndarray:
    """Real tokens per row of a `[N, S]` 0/1 padding mask."""
    return np.asarray(padding_mask).astype(bool).sum(axis=1).astype(np.int64)


def epoch_batches(
    lengths, batch_size: int, seed: int, epoch: int, group: int = 50
) -> list[np.ndarray]:
    """The row indices of each batch of one epoch.

    Args:
        lengths: `[N]` row lengths.
        batch_size: rows per batch (the last batch of each group may be smaller).
        seed, epoch: the order is a function of both, nothing else.
        group: batches per length-sorted group (0: no grouping).

    Returns:
        `ceil(N / batch_size)` index arrays, covering each row once.

    Example:

    >>> lengths = np.array([5, 90, 7, 88, 6, 91, 8, 87])
    >>> batches = epoch_batches(lengths, batch_size=2, seed=0, epoch=0, group=4)
    >>> sorted(sorted(lengths[b].tolist()) for b in batches)
    [[5, 6], [7, 8], [87, 88], [90, 91]]
    """
    lengths = np.asarray(lengths)
    rng = np.random.default_rng([int(seed), int(epoch)])
    order = rng.permutation(len(lengths))
    if group <= 0:
        chunks = [order]
    else:
        span = group * batch_size
        chunks = [order[i : i + span] for i in range(0, len(order), span)]
        # Stable sort by length inside each group (ties keep the shuffled order).
        chunks = [chunk[np.argsort(lengths[chunk], kind="stable")] for chunk in chunks]
    batches = [
        chunk[i : i + batch_size] for chunk in chunks for i in range(0, len(chunk), batch_size)
    ]
    if group > 0:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def ordered_batches(lengths, batch_size: int) -> list[np.ndarray]:
    """Batches of rows sorted by length, for prediction (undo with the concatenated indices)."""
    order = np.argsort(np.asarray(lengths), kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def pad_batch(features: dict, index, lengths, multiple: int = 8) -> dict:
    """The rows `index` of the arrays, `[N, S]` ones cut to their longest row (rounded up).

    Arrays whose second axis is not the sequence (`[N]` labels, say) are only indexed.

    Example:

    >>> ids = np.array([[2, 7, 3, 0, 0, 0], [2, 7, 8, 9, 3, 0]])
    >>> pad_batch({"token_ids": ids}, [0], row_lengths(ids > 0), multiple=2)["token_ids"]
    array([[2, 7, 3, 0]])
    """
    index = np.asarray(index)
    width = np.asarray(features["token_ids"] if "token_ids" in features else lengths).shape[-1]
    longest = int(np.max(np.asarray(lengths)[index])) if len(index) else 1
    cut = min(width, -(-max(longest, 1) // multiple) * multiple)
    return {name: _rows(array, index, width, cut) for name, array in features.items()}


def _rows(array, index, width, cut):
    array = np.asarray(array)
    if array.ndim >= 2 and array.shape[1] == width:
        return np.ascontiguousarray(array[index, :cut])
    return array[index]


def _spec(array, width):
    array = np.asarray(array)
    sequence = array.ndim >= 2 and array.shape[1] == width
    shape = [None, None, *array.shape[2:]] if sequence else [None, *array.shape[1:]]
    return tf.TensorSpec(shape, tf.as_dtype(array.dtype))


def batch_dataset(
    features: dict,
    targets=None,
    *,
    batch_size: int,
    seed: int = 0,
    epochs=range(1),
    group: int = 50,
    multiple: int = 8,
) -> tf.data.Dataset:
    """A dataset of padded batches for the given epochs, one after the other.

    Args:
        features: arrays with `N` rows: `[N, S]` `token_ids`, `padding_mask` and
            `segment_ids`, and any others (`[N, S]` ones are cut with them).
        targets: an `[N, ...]` array or a dict of them (per-token `[N, S]` targets are
            cut as the features are), or None.
        batch_size, seed, group, multiple: see `epoch_batches` and `pad_batch`.
        epochs: the epoch numbers to cover, in order (`range(start, end)`).

    Returns:
        A `tf.data.Dataset` of `inputs` or `(inputs, targets)` batches,
        `len(epochs) * ceil(N / batch_size)` of them.
    """
    lengths = row_lengths(features["padding_mask"])
    width = np.asarray(features["token_ids"]).shape[1]
    epochs = list(epochs)
    single = targets is not None and not isinstance(targets, dict)
    target_dict = {"__target": targets} if single else (targets or {})

    merged = {**features, **{f"target/{k}": v for k, v in target_dict.items()}}

    def generate():
        for epoch in epochs:
            for index in epoch_batches(lengths, batch_size, seed, epoch, group):
                batch = pad_batch(merged, index, lengths, multiple)
                inputs = {name: batch[name] for name in features}
                if targets is None:
                    yield inputs
                    continue
                cut = {name: batch[f"target/{name}"] for name in target_dict}
                yield inputs, cut["__target"] if single else cut

    inputs_spec = {name: _spec(value, width) for name, value in features.items()}
    targets_spec = {name: _spec(value, width) for name, value in target_dict.items()}
    if targets is None:
        signature = inputs_spec
    else:
        signature = (inputs_spec, targets_spec["__target"] if single else targets_spec)
    dataset = tf.data.Dataset.from_generator(generate, output_signature=signature)
    batches = len(epochs) * -(-len(lengths) // batch_size)
    return dataset.apply(tf.data.experimental.assert_cardinality(batches)).prefetch(2)
