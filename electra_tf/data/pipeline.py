"""The pre-training input pipeline: an exactly resumable, shuffled stream of packed examples.

The stream is a pure function of `(files, counts, seed)`, addressable by
example offset, so a run resumed at step `s` reads exactly the examples the
uninterrupted run read after step `s`, without replaying the data before it:

- epoch `e` reads the files in a seeded permutation of their order;
- consecutive records are cut into blocks of `shuffle_block` examples, and each
  block is permuted by a seed derived from `(seed, e, block)`;
- starting at offset `o` skips whole files by their example counts, then the
  records and block positions before `o` (at most one file and one block).

Each `tf.distribute` input pipeline (one per worker) reads its own shard of
the files and keeps its own offset (`step * per-pipeline batch`).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from electra_tf.data.tfrecords import parse_batch

__all__ = ["example_stream", "pretraining_dataset", "shard_files"]


def _permutation(seed_pair, n):
    """A seeded permutation of range(n) as a tensor (stateless)."""
    return tf.argsort(tf.random.stateless_uniform([n], seed=seed_pair), stable=True)


def _block_shuffle(records, seed: int, epoch, block: int, first_block: int = 0):
    """Permutes each run of `block` consecutive records; block ids start at `first_block`."""

    def permute(index, chunk):
        size = tf.shape(chunk)[0]
        seed_pair = tf.stack([tf.cast(seed, tf.int64), epoch * 1_000_003 + index])
        return tf.gather(chunk, _permutation(seed_pair, size))

    blocks = records.batch(block).enumerate(start=first_block)
    return blocks.map(permute).unbatch()


def _file_order(num_files: int, seed: int, epoch: int) -> np.ndarray:
    """The epoch's file order, computed the same way in Python and in the graph."""
    seed_pair = tf.constant([seed, epoch * 7919 + 17], tf.int64)
    return _permutation(seed_pair, num_files).numpy()


def example_stream(
    files, counts, *, seed: int, shuffle_block: int, start: int = 0, repeat: bool = True
) -> tf.data.Dataset:
    """Serialized records in the resumable shuffled order, from example `start`.

    Args:
        files: list of TFRecord paths (this pipeline's shard).
        counts: examples per file (same order).
        seed: int.
        shuffle_block: examples permuted together.
        start: offset into the infinite (or single-epoch) stream.
        repeat: False stops after the epoch containing `start`.

    Returns:
        `tf.data.Dataset` of scalar strings.
    """
    files = list(files)
    counts = [int(c) for c in counts]
    total = sum(counts)
    if total == 0:
        raise ValueError("example_stream: the files hold no examples.")
    epoch, offset = divmod(int(start), total)

    def epoch_from(epoch_index: int, offset_in_epoch: int) -> tf.data.Dataset:
        order = _file_order(len(files), seed, epoch_index)
        first_block, skip_in_block = divmod(offset_in_epoch, shuffle_block)
        to_skip = first_block * shuffle_block
        ordered = []
        for index in order:
            if to_skip >= counts[index] and not ordered:
                to_skip -= counts[index]  # a whole file before the start: not read at all
                continue
            ordered.append(files[index])
        records = tf.data.TFRecordDataset(ordered).skip(to_skip)
        records = _block_shuffle(
            records, seed, tf.constant(epoch_index, tf.int64), shuffle_block, first_block
        )
        return records.skip(skip_in_block)

    stream = epoch_from(epoch, offset)
    if repeat:
        later = tf.data.Dataset.range(epoch + 1, 2**62).flat_map(
            lambda e: tf.data.Dataset.from_tensors(e).flat_map(
                lambda e_: _graph_epoch(files, seed, e_, shuffle_block)
            )
        )
        stream = stream.concatenate(later)
    return stream


def _graph_epoch(files, seed: int, epoch, shuffle_block: int) -> tf.data.Dataset:
    """A whole epoch, built in the graph (for epochs after the first)."""
    seed_pair = tf.stack([tf.constant(seed, tf.int64), epoch * 7919 + 17])
    order = _permutation(seed_pair, len(files))
    ordered = tf.gather(tf.constant(files), order)
    records = tf.data.TFRecordDataset(ordered)
    return _block_shuffle(records, seed, epoch, shuffle_block)


def shard_files(files, counts, input_context):
    """This input pipeline's files: every n-th file, or all of them when there are fewer files
    than pipelines (then records are sharded instead)."""
    if input_context is None or input_context.num_input_pipelines == 1:
        return files, counts, None
    n, i = input_context.num_input_pipelines, input_context.input_pipeline_id
    if len(files) >= n:
        return files[i::n], counts[i::n], None
    return files, counts, (n, i)


def pretraining_dataset(
    files,
    counts,
    *,
    sequence_length: int,
    batch_size: int,
    seed: int,
    shuffle_block: int = 8192,
    start_step: int = 0,
    input_context: tf.distribute.InputContext | None = None,
    repeat: bool = True,
) -> tf.data.Dataset:
    """Batches of packed examples for `ElectraPretrainer`.

    Args:
        files, counts: TFRecord files and their example counts.
        sequence_length: the records' length.
        batch_size: the *global* batch size.
        seed: shuffling seed.
        shuffle_block: examples permuted together.
        start_step: the step to start at (resume); this pipeline skips
            `start_step * its batch` examples.
        input_context: from `strategy.distribute_datasets_from_function`;
            selects this pipeline's files and per-pipeline batch.
        repeat: loop over the data forever.

    Returns:
        `tf.data.Dataset` of dicts of int32 `[batch, sequence_length]`
        (`token_ids`, `padding_mask`, `segment_ids`), `drop_remainder=True`.
    """
    per_batch, per_step = batch_size, batch_size
    if input_context is not None:
        # Each replica takes its own consecutive batch of the pipeline's stream.
        per_batch = input_context.get_per_replica_batch_size(batch_size)
        replicas_per_pipeline = (
            input_context.num_replicas_in_sync // input_context.num_input_pipelines
        )
        per_step = per_batch * replicas_per_pipeline
    files, counts, record_shard = shard_files(list(files), list(counts), input_context)
    records = example_stream(
        files,
        counts,
        seed=seed,
        shuffle_block=shuffle_block,
        start=0 if record_shard else start_step * per_step,
        repeat=repeat,
    )
    if record_shard is not None:
        records = records.shard(*record_shard).skip(start_step * per_step)
    batches = records.batch(per_batch, drop_remainder=True)
    batches = batches.map(
        lambda serialized: parse_batch(serialized, sequence_length),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    options = tf.data.Options()
    options.deterministic = True
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    return batches.with_options(options).prefetch(tf.data.AUTOTUNE)
