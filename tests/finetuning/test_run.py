"""The fine-tuning driver: a short run beats the majority class and writes its tables."""

import json

import numpy as np
import tensorflow as tf
from helpers import scratch_init_one_layer, shuffle_warnings, write_lines
from tensorflow.python.framework import ops

from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets.readers import (
    read_glue_tsv,
)
from electra_tf.datasets.tasks import TASKS
from electra_tf.finetuning.run import finetune
from electra_tf.tasks.config import FinetuneConfig


def _toy_task(tmp_path, n=160, seed=0):
    rng = np.random.default_rng(seed)
    positive, negative = ["good", "great", "fine"], ["bad", "awful", "poor"]
    neutral = ["the", "movie", "was", "plot", "actors", "very", "and"]
    rows = []
    for _ in range(n):
        label = int(rng.random() < 0.4)  # majority class: 0 (60%)
        words = list(rng.choice(neutral, size=5)) + [rng.choice(positive if label else negative)]
        rng.shuffle(words)
        rows.append(f"{' '.join(words)}\t{label}")
    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + positive + negative + neutral, tmp_path / "v.txt"
    )
    train = write_lines(tmp_path / "train.tsv", ["sentence\tlabel", *rows[: n * 3 // 4]])
    dev = write_lines(tmp_path / "dev.tsv", ["sentence\tlabel", *rows[n * 3 // 4 :]])
    return vocab, train, dev


def test_a_short_fine_tune_beats_the_majority_class(tmp_path, recwarn):
    vocab, train, dev = _toy_task(tmp_path)
    task = TASKS["sst2"]
    data = {"train": read_glue_tsv(task, train), "dev": read_glue_tsv(task, dev)}
    majority = max(
        np.mean([e.label for e in data["dev"]]), 1 - np.mean([e.label for e in data["dev"]])
    )
    init = scratch_init_one_layer(18, vocab)
    # A from-scratch post-LayerNorm encoder sits on a plateau at small rates; 1e-2 without
    # layer-wise decay leaves it within a few epochs.
    config = FinetuneConfig(
        learning_rate=1e-2,
        layerwise_decay=1.0,
        epochs=10,
        batch_size=16,
        seeds=2,
        max_seq_length=16,
    )
    lines = []  # with what each saw: the op-creation stack and Grappler (electra_tf.runtime)
    grappler_off = lambda: tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]  # noqa: E731
    report = finetune(
        task, init, data, config, tmp_path / "out",
        lambda x: lines.append((x, type(ops.tf_stack).__name__, grappler_off())),
    )  # fmt: skip
    trained = {(stack, off) for line, stack, off in lines if "] sst2 seed " in line}
    assert trained == {("_OneStack", True)}
    assert type(ops.tf_stack).__name__ != "_OneStack" and not grappler_off()
    accuracy = report["summary"]["dev/accuracy"]
    assert accuracy["median"] > majority + 0.15 and accuracy["n"] == 2
    assert report["runs"][0]["train_loss"][-1] < report["runs"][0]["train_loss"][0]
    table = (tmp_path / "out" / "results.md").read_text()
    assert "dev/accuracy" in table and "median" in table
    assert (
        json.loads((tmp_path / "out" / "results.json").read_text())["summary"] == report["summary"]
    )
    assert not shuffle_warnings(recwarn)


def test_glue_test_files_become_the_servers_submission_files(tmp_path):
    from electra_tf.finetuning.glue_submission import read_glue_test, write_glue_submission

    vocab, train, dev = _toy_task(tmp_path)
    write_lines(tmp_path / "test.tsv", ["index\tsentence", "0\tthe movie was good", "1\tbad"])
    task = TASKS["sst2"]
    indices, texts, pairs = read_glue_test(task, tmp_path / "test.tsv")
    assert (indices, texts, pairs) == (["0", "1"], ["the movie was good", "bad"], None)

    class Fixed:  # a model whose outputs are known
        def predict(self, x, batch_size):
            return np.array([[0.2, 0.9], [2.0, -1.0]])

    written = write_glue_submission(task, Fixed(), tmp_path, tmp_path / "out")
    assert [p.name for p in written] == ["SST-2.tsv"]
    assert written[0].read_text() == "index\tprediction\n0\t1\n1\t0\n"
    write_lines(tmp_path / "test_matched.tsv", ["index\tsentence1\tsentence2", "7\ta\tb"])

    class Three:
        def predict(self, x, batch_size):
            assert x == (["a"], ["b"])
            return np.array([[0.1, 0.2, 3.0]])

    written = write_glue_submission(TASKS["mnli"], Three(), tmp_path, tmp_path / "out")
    assert written[0].read_text() == "index\tprediction\n7\tneutral\n"
