"""Packed examples as serialized `tf.train.Example`s, many at once, and shard files.

`serialize_examples` writes the bytes protobuf writes with
`SerializeToString(deterministic=True)` (map keys in sorted order) for the three
int64 features, from `[examples, length]` integer matrices, without building a
message per example: the varints come from a table, the framing from a few byte
joins per example. Protobuf's own default serialization orders the map by a
per-process hash seed, so its bytes differ between runs; these never do.

Example:

>>> import numpy as np, tensorflow as tf
>>> ids = np.array([[2, 7, 300, 3]]); mask = np.array([[1, 1, 1, 1]]); segments = 0 * ids
>>> (record,) = serialize_examples(ids, mask, segments)
>>> parsed = tf.train.Example.FromString(record).features.feature
>>> list(parsed["input_ids"].int64_list.value)
[2, 7, 300, 3]
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

__all__ = ["serialize_examples", "ShardWriter", "SHARD_PATTERN", "tfrecord_bytes"]

SHARD_PATTERN = "pretrain-{:05d}.tfrecord"
FEATURES = (b"input_ids", b"input_mask", b"segment_ids")  # sorted: the deterministic order
_TABLE_LIMIT = 1 << 22


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


@functools.lru_cache(maxsize=8)
def _table(size: int):
    """Varint bytes `[size, groups]` (uint8) and lengths `[size]` of 0 .. size - 1."""
    values = np.arange(size, dtype=np.uint64)
    groups = max(1, ((size - 1).bit_length() + 6) // 7)
    shifted = values[:, None] >> (np.arange(groups, dtype=np.uint64) * np.uint64(7))
    lengths = 1 + (shifted[:, 1:] > 0).sum(axis=1)
    continued = np.arange(groups) < lengths[:, None] - 1
    table = (shifted & np.uint64(0x7F)).astype(np.uint8) | (continued * 0x80).astype(np.uint8)
    return table, lengths


def _packed(matrix: np.ndarray) -> tuple[bytes, list[int]]:
    """Every row's values as concatenated varints, and the running end of each row."""
    matrix = np.asarray(matrix, dtype=np.int64)
    if matrix.size and matrix.min() < 0:
        raise ValueError("serialize_examples: values must not be negative.")
    top = int(matrix.max()) + 1 if matrix.size else 1
    if top <= _TABLE_LIMIT:
        table, lengths = _table(1 << max(7, (top - 1).bit_length()))
        sizes = lengths[matrix]
        keep = np.arange(table.shape[1]) < sizes[..., None]
        data = table[matrix][keep].tobytes()
        return data, np.cumsum(sizes.sum(axis=1)).tolist()
    rows = [b"".join(_varint(int(v)) for v in row) for row in matrix]
    return b"".join(rows), np.cumsum([len(row) for row in rows]).tolist()


@functools.lru_cache(maxsize=65536)
def _entry_head(name: bytes, size: int) -> bytes:
    """What precedes `size` bytes of packed values in the map entry `feature[name]`."""
    values = 1 + len(_varint(size)) + size  # Int64List.value (packed)
    feature = 1 + len(_varint(values)) + values  # Feature.int64_list
    entry = 2 + len(name) + 1 + len(_varint(feature)) + feature
    return (
        b"\x0a" + _varint(entry)  # Features.feature (a map entry)
        + b"\x0a" + _varint(len(name)) + name  # its key
        + b"\x12" + _varint(feature)  # its value: a Feature
        + b"\x1a" + _varint(values)  # Feature.int64_list
        + b"\x0a" + _varint(size)  # Int64List.value
    )  # fmt: skip


def serialize_examples(input_ids, input_mask, segment_ids) -> list[bytes]:
    """Serialized `tf.train.Example`s, one per row of the three `[examples, length]` matrices.

    Equal, byte for byte, to building each `tf.train.Example` with int64 features
    `input_ids`, `input_mask`, `segment_ids` and `SerializeToString(deterministic=True)`.
    """
    columns = [_packed(m) for m in (input_ids, input_mask, segment_ids)]
    records, starts = [], [0, 0, 0]
    for row in range(len(columns[0][1])):
        body = []
        for k, (data, ends) in enumerate(columns):
            body += (_entry_head(FEATURES[k], ends[row] - starts[k]), data[starts[k] : ends[row]])
            starts[k] = ends[row]
        features = b"".join(body)
        records.append(b"\x0a" + _length(len(features)) + features)
    return records


_length = functools.lru_cache(maxsize=65536)(_varint)


class ShardWriter:
    """Writes serialized examples into consecutive shards of a fixed size.

    A shard is written as `<name>.tmp` and renamed when it is full (or at
    `close`), so only complete shards carry final names. `pattern` names the
    shards (`str.format` of their number).
    """

    def __init__(self, folder, examples_per_shard: int, pattern: str = SHARD_PATTERN):
        self.folder = Path(folder)
        self.per_shard = examples_per_shard
        self.pattern = pattern
        self.shards: list[tuple[str, int]] = []
        self._writer = None
        self._name = None
        self._count = 0

    def write(self, serialized: bytes) -> None:
        """Appends one record, starting a new shard when the current one is full."""
        import tensorflow as tf

        if self._writer is None:
            self._name = self.pattern.format(len(self.shards))
            self._writer = tf.io.TFRecordWriter(str(self.folder / (self._name + ".tmp")))
            self._count = 0
        self._writer.write(serialized)
        self._count += 1
        if self._count == self.per_shard:
            self._finish_shard()

    def _finish_shard(self) -> None:
        self._writer.close()
        os.replace(self.folder / (self._name + ".tmp"), self.folder / self._name)
        self.shards.append((self._name, self._count))
        self._writer = None

    def close(self) -> list[tuple[str, int]]:
        """Finishes the last shard; returns `(file name, examples)` of every shard."""
        if self._writer is not None:
            self._finish_shard()
        return self.shards


def tfrecord_bytes(records) -> bytes:
    """The bytes of a TFRecord file of `records`, as `ShardWriter` writes one (TensorFlow's
    writer, into a local temporary file): a shard to upload whole."""
    import tempfile

    import tensorflow as tf

    with tempfile.TemporaryDirectory(prefix="electra-shard-") as folder:
        path = os.path.join(folder, "shard.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for record in records:
                writer.write(record)
        return Path(path).read_bytes()
