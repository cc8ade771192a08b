import numpy as np
import pytest
import tensorflow as tf
from helpers import write_packed

from electra_tf.data.pipeline import example_stream, pretraining_dataset
from electra_tf.data.tfrecords import (
    DataError,
    Manifest,
    check_first_record,
    count_records,
    parse_batch,
    resolve_files,
    serialize_example,
)


def _numbered_files(folder, counts, seq=4):
    """Files whose records carry their global number in input_ids[1]."""
    files, k = [], 0
    for i, count in enumerate(counts):
        path = str(folder / f"part-{i}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(count):
                writer.write(serialize_example([2, k, 0, 3], [1, 1, 1, 1], [0, 0, 0, 0]))
                k += 1
        files.append(path)
    return files


def _numbers(stream, n):
    parsed = stream.take(n).batch(1024).map(lambda s: parse_batch(s, 4))
    return np.concatenate([b["token_ids"][:, 1].numpy() for b in parsed]).tolist()


def test_stream_visits_every_example_once_per_epoch_in_a_shuffled_order(tmp_path):
    counts = [5, 7, 3]
    files = _numbered_files(tmp_path, counts)
    order = _numbers(example_stream(files, counts, seed=1, shuffle_block=4), 30)
    first, second = order[:15], order[15:]
    assert sorted(first) == list(range(15)) and sorted(second) == list(range(15))
    assert first != list(range(15)) and first != second  # shuffled, differently each epoch
    again = _numbers(example_stream(files, counts, seed=1, shuffle_block=4), 30)
    assert again == order
    other = _numbers(example_stream(files, counts, seed=2, shuffle_block=4), 30)
    assert other != order


@pytest.mark.parametrize("start", [0, 1, 4, 6, 12, 15, 16, 29, 44])
def test_starting_at_an_offset_equals_skipping_there(tmp_path, start):
    counts = [5, 7, 3]
    files = _numbered_files(tmp_path, counts)
    full = _numbers(example_stream(files, counts, seed=3, shuffle_block=4), 60)
    resumed = _numbers(
        example_stream(files, counts, seed=3, shuffle_block=4, start=start), 60 - start
    )
    assert resumed == full[start:]


def test_batches_resume_at_a_step_and_split_across_pipelines(tmp_path):
    counts = [6, 6, 6, 6]
    files = _numbered_files(tmp_path, counts)

    def ids(dataset, n):
        return [b["token_ids"][:, 1].numpy().tolist() for b in dataset.take(n)]

    full = ids(
        pretraining_dataset(
            files, counts, sequence_length=4, batch_size=3, seed=5, shuffle_block=5
        ),
        6,
    )
    resumed = ids(
        pretraining_dataset(
            files, counts, sequence_length=4, batch_size=3, seed=5, shuffle_block=5, start_step=4
        ),
        2,
    )
    assert resumed == full[4:]
    # Two input pipelines (workers), one replica each: disjoint halves of the files.
    per_worker = [
        ids(
            pretraining_dataset(
                files,
                counts,
                sequence_length=4,
                batch_size=4,
                seed=5,
                input_context=tf.distribute.InputContext(2, i, 2),
            ),
            6,
        )
        for i in range(2)
    ]
    seen = [set(np.ravel(batches)) for batches in per_worker]
    assert not seen[0] & seen[1] and len(seen[0] | seen[1]) == 24
    assert all(len(b) == 2 for b in per_worker[0])  # per-replica batch = 4 / 2


def test_prepare_folders_files_and_globs_resolve(tmp_path):
    folder = write_packed(tmp_path / "data", n=10, seq=8, shards=2)
    files, counts, manifest = resolve_files(folder)
    assert counts == [5, 5] and manifest.sequence_length == 8 and manifest.special_ids["mask"] == 4
    assert count_records(files) == [5, 5]
    # Files named by a glob get the manifest beside them (its counts and vocabulary);
    # without one, their counts are unknown.
    globbed, beside, found = resolve_files(str(tmp_path / "data" / "*.tfrecord"))
    assert globbed == files and beside == [5, 5] and found.special_ids == manifest.special_ids
    one, one_count, _ = resolve_files(files[1])
    assert one == files[1:] and one_count == [5]
    bare = write_packed(tmp_path / "bare", n=10, seq=8, shards=2, manifest=False)
    _, unknown, none = resolve_files(f"{bare}/*.tfrecord")
    assert unknown is None and none is None
    check_first_record(files, 8)
    with pytest.raises(DataError, match="length 8 but data.sequence_length is 16"):
        check_first_record(files, 16)
    with pytest.raises(DataError, match="No file matches"):
        resolve_files(str(tmp_path / "missing-*.tfrecord"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="neither a manifest.json nor"):
        resolve_files(str(tmp_path / "empty"))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{not json")
    with pytest.raises(DataError, match="is not a readable manifest"):
        resolve_files(str(tmp_path / "bad"))
    reread = Manifest.read(folder)
    assert reread.num_examples == 10 and reread.files == files


def test_foreign_records_with_extra_features_load(tmp_path):
    path = str(tmp_path / "reference.tfrecord")
    example = tf.train.Example(
        features=tf.train.Features(
            feature={
                "input_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[2, 7, 3, 0])),
                "input_mask": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 1, 1, 0])),
                "segment_ids": tf.train.Feature(int64_list=tf.train.Int64List(value=[0, 0, 0, 0])),
                "masked_lm_positions": tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
            }
        )
    )
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(example.SerializeToString())
    check_first_record([path], 4)
    batch = next(iter(pretraining_dataset([path], [1], sequence_length=4, batch_size=1, seed=0)))
    assert batch["token_ids"].numpy().tolist() == [[2, 7, 3, 0]]
    assert batch["padding_mask"].dtype == tf.int32
    with pytest.raises(DataError, match="no 'segment_ids' feature"):
        other = str(tmp_path / "other.tfrecord")
        with tf.io.TFRecordWriter(other) as writer:
            writer.write(
                tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "input_ids": example.features.feature["input_ids"],
                            "input_mask": example.features.feature["input_mask"],
                        }
                    )
                ).SerializeToString()
            )
        check_first_record([other], 4)
