"""Held-out evaluation of a checkpoint, with its unigram and bigram baselines."""

import numpy as np
import pytest
from helpers import SPECIAL, tiny_config, write_packed

from electra_tf.pretraining.evaluation import held_out_report
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _report(tmp_path, *overrides):
    data = write_packed(tmp_path / "data", n=480, seq=16, shards=2)
    files = [f"{data}/shard-000.tfrecord", f"{data}/shard-001.tfrecord"]
    model = ElectraPretrainer(tiny_config(*overrides))
    model.compile()
    special = set(SPECIAL.values())
    return held_out_report(model, files[1:], [240], special, 16, baseline_files=files[:1])


def test_report_of_a_discriminator_without_generator(tmp_path):
    counts = tmp_path / "counts.npy"
    np.save(counts, np.arange(64, dtype=np.int64))
    report = _report(tmp_path, "objective.name=unigram", f"objective.unigram_counts={counts}")
    assert "mlm_accuracy" not in report and "unigram_baseline_mlm_accuracy" not in report
    assert 0.0 <= report["disc_auc"] <= 1.0
    # The examples are runs of one word ([CLS] a a a [SEP] b b b [SEP]); a replaced token
    # breaks its run, which counted pairs expose (words unseen in the counted shard do not).
    assert report["bigram_baseline_disc_auc"] > 0.8  # 0.906 here


def test_report_of_a_generator_without_discriminator(tmp_path):
    report = _report(tmp_path, "objective.name=bert_mlm")
    assert "disc_auc" not in report and "bigram_baseline_disc_auc" not in report
    assert 0.0 <= report["mlm_accuracy"] <= 1.0
    assert 0.0 < report["unigram_baseline_mlm_accuracy"] <= 1.0


def test_bigram_baseline_reads_every_real_neighbour_when_only_masked_tokens_count(tmp_path):
    # electra_15 weighs the masked positions only; their neighbours are still real tokens.
    # Reading the loss weights as the padding mask would leave no neighbours, every score 0
    # and the AUC at exactly 0.5.
    report = _report(tmp_path, "objective.name=electra_15")
    assert report["replaced_fraction"] > 0.9  # only masked positions count
    assert report["bigram_baseline_disc_auc"] > 0.8  # 0.992 here


def test_report_counts_whole_batches_and_keras_does_not_warn(tmp_path, recwarn):
    # 240 examples in batches of 64: three whole batches. With the length unknown, Keras
    # ends the pass by warning that the input "ran out of data" (a finite evaluation
    # set is expected to end).
    data = write_packed(tmp_path / "data", n=480, seq=16, shards=2)
    model = ElectraPretrainer(tiny_config())
    model.compile()
    special = set(SPECIAL.values())
    files = [f"{data}/shard-001.tfrecord"]
    report = held_out_report(model, files, [240], special, 64)
    assert report["evaluated_examples"] == 192
    messages = [str(w.message) for w in recwarn]
    assert not any("ran out of data" in m for m in messages), messages


def test_unigram_baseline_guesses_the_training_texts_most_frequent_token(tmp_path):
    import tensorflow as tf

    from electra_tf.data.tfrecords import serialize_example
    from electra_tf.pretraining.evaluation import unigram_baseline_accuracy

    def shard(name, rows):
        path = str(tmp_path / name)
        with tf.io.TFRecordWriter(path) as writer:
            for ids in rows:
                padded = [*ids, *[0] * (8 - len(ids))]
                mask = [1] * len(ids) + [0] * (8 - len(ids))
                writer.write(serialize_example(padded, mask, [0] * 8))
        return [path]

    special = {0, 1, 2}  # pad, cls, sep
    train = shard("train", [[1, 7, 7, 7, 5, 2]])  # 7 is the training text's commonest token
    held = shard("held", [[1, 5, 5, 5, 7, 2], [1, 5, 9, 2]])  # 5 is the held-out one's
    # Counted on the held-out text itself: 4 of its 6 real non-special tokens are 5.
    assert unigram_baseline_accuracy(held, 8, special) == pytest.approx(4 / 6)
    # Counted on training text, as the report does: the guess is 7, right once in 6.
    assert unigram_baseline_accuracy(held, 8, special, train) == pytest.approx(1 / 6)
