"""Batches of packed rows padded to their own longest row, grouped by length, epoch by epoch.

Fine-tuning text is short next to the model's maximum length (movie-review
snippets average about 25 WordPieces against 128), so padding every batch to
the maximum spends most of a step on padding. Here rows are packed once at the
maximum length; each batch is cut to its longest row. The batches' spec leaves
the length `None`, so Keras traces the train step once for every length; where
shapes are compiled one by one (XLA, TPUs), `multiple` rounds the length up so
that only a few reach the model (on this CPU, rounding to 8 was about 6% slower
than none on the movie reviews). With
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

__all__ = [
    "epoch_batches", "pad_batch", "batch_dataset", "ordered_batches", "row_lengths",
    "rounded_rows",
]  # fmt: skip


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


def rounded_rows(index, batch_size: int) -> np.ndarray:
    """`index` with its last row repeated up to the next power of two rows (at most
    `batch_size`): where each shape is compiled anew (XLA), batches of any size then reuse
    at most `log2(batch_size) + 1` row counts; one row stays one row.

    Example:

    >>> rounded_rows(np.array([4, 9, 2]), batch_size=32).tolist()
    [4, 9, 2, 2]
    >>> rounded_rows(np.arange(20), batch_size=24).shape
    (24,)
    """
    index = np.asarray(index)
    rows = len(index)
    target = min(max(int(batch_size), rows), 1 << max(rows - 1, 0).bit_length())
    return np.concatenate([index, np.repeat(index[-1:], target - rows)]) if rows else index


def pad_batch(features: dict, index, lengths, multiple: int = 1) -> dict:
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
    cut = _cut(longest, width, multiple)
    return {name: _rows(array, index, width, cut) for name, array in features.items()}


def _rows(array, index, width, cut):
    array = np.asarray(array)
    if _is_sequence(array, width):
        return np.ascontiguousarray(array[index, :cut])
    return array[index]


def _is_sequence(array, width) -> bool:
    return array.ndim >= 2 and array.shape[1] == width


def _cut(longest: int, width: int, multiple: int) -> int:
    """A batch's length: its longest row, rounded up to `multiple`, at most `width`."""
    return min(width, -(-max(longest, 1) // multiple) * multiple)


def _plan(lengths, width: int, batch_size: int, seed: int, epochs, group: int, multiple: int):
    """(row order, batch bounds in it, batch lengths) of the epochs' batches, as int64."""
    plan = [index for e in epochs for index in epoch_batches(lengths, batch_size, seed, e, group)]
    cuts = [_cut(int(lengths[index].max()) if len(index) else 1, width, multiple) for index in plan]
    bounds = np.cumsum([0, *(len(index) for index in plan)])
    order = np.concatenate(plan) if plan else np.zeros(0)
    return order.astype(np.int64), bounds.astype(np.int64), np.asarray(cuts, np.int64)


def batch_dataset(
    features: dict,
    targets=None,
    *,
    batch_size: int,
    seed: int = 0,
    epochs=range(1),
    group: int = 50,
    multiple: int = 1,
    cut_targets: bool = False,
) -> tf.data.Dataset:
    """A dataset of padded batches for the given epochs, one after the other.

    The batches are planned here (`epoch_batches`, `pad_batch`'s cut) and gathered in
    the graph from the arrays, as Keras does for NumPy input: no Python runs per batch.

    Args:
        features: arrays with `N` rows: `[N, S]` `token_ids`, `padding_mask` and
            `segment_ids`, and any others (`[N, S]` ones are cut with them).
        targets: an `[N, ...]` array or a dict of them, or None.
        batch_size, seed, group, multiple: see `epoch_batches` and `pad_batch`.
        epochs: the epoch numbers to cover, in order (`range(start, end)`).
        cut_targets: targets are per token (`[N, S]` tags): cut them as the features are.
            Otherwise targets are never cut, whatever their width (multi-hot rows over as
            many labels as `S` stay whole).

    Returns:
        A `tf.data.Dataset` of `inputs` or `(inputs, targets)` batches,
        `len(epochs) * ceil(N / batch_size)` of them, their lengths `None` in the spec.
    """
    lengths = row_lengths(features["padding_mask"])
    width = np.asarray(features["token_ids"]).shape[1]
    single = targets is not None and not isinstance(targets, dict)
    target_dict = {"__target": targets} if single else (targets or {})
    arrays = {name: np.asarray(value) for name, value in features.items()}
    arrays.update({f"target/{k}": np.asarray(v) for k, v in target_dict.items()})

    order, bounds, cuts = (
        tf.constant(a) for a in _plan(lengths, width, batch_size, seed, epochs, group, multiple)
    )
    tensors = {name: tf.convert_to_tensor(array) for name, array in arrays.items()}
    fixed = multiple >= width  # pad_to="max": one static shape, as XLA and TPUs want
    sequence = {
        name: _is_sequence(array, width) and (cut_targets or not name.startswith("target/"))
        for name, array in arrays.items()
    }

    def fetch(number):
        index = order[bounds[number] : bounds[number + 1]]
        batch = {}
        for name, tensor in tensors.items():
            rows = tf.gather(tensor, index)
            if sequence[name] and fixed:  # every batch at the full width: say so statically
                rows = tf.ensure_shape(rows, [None, width, *rows.shape[2:]])
            elif sequence[name]:
                rows = rows[:, : cuts[number]]
            batch[name] = rows
        inputs = {name: batch[name] for name in features}
        if targets is None:
            return inputs
        cut = {name: batch[f"target/{name}"] for name in target_dict}
        return inputs, cut["__target"] if single else cut

    # A gather per batch needs no parallel calls; without autotuning, the iterator's teardown
    # does not wait for the tuning thread (it held `fit` up to 40 s after its last step).
    options = tf.data.Options()
    options.autotune.enabled = False
    dataset = tf.data.Dataset.range(int(cuts.shape[0])).map(fetch).prefetch(2)
    return dataset.with_options(options)
