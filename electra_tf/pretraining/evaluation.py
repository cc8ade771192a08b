"""Held-out evaluation of a pre-training checkpoint, beside baselines with no learned weights.

`held_out_report(model, files, counts, ...)` draws fresh, seeded masks over
held-out packed examples and reports the discriminator's exact (rank-based)
replaced-token AUC and accuracy and the generator's MLM accuracy, with two
yardsticks on the same data, both counted on the training text: a unigram
baseline (always the training text's most frequent token) for the generator,
and a bigram-count detector (`BigramDetector`) scored on the very tokens the
discriminator saw. `evaluate_checkpoint(path, data)` is what `electra-tf evaluate` runs.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "unigram_baseline_accuracy",
    "detection_pass",
    "held_out_detection_auc",
    "bigram_detector",
    "held_out_report",
    "evaluate_checkpoint",
]


def _token_counts(files, sequence_length: int, special: set[int]) -> dict[int, int]:
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
    return counts


def unigram_baseline_accuracy(
    files, sequence_length: int, special: set[int], count_files=None
) -> float:
    """Accuracy on `files` of always predicting the most frequent non-special token of
    `count_files` (the training files; None: `files` themselves).

    Masked positions are drawn uniformly among non-special real tokens, so this
    is the MLM accuracy of a generator that ignores the context.
    """
    counts = _token_counts(files, sequence_length, special)
    total = sum(counts.values())
    if not total:
        return 0.0
    if count_files is None:
        return max(counts.values()) / total
    trained = _token_counts(count_files, sequence_length, special)
    guess = max(trained, key=trained.get) if trained else None
    return counts.get(guess, 0) / total


def detection_pass(model, dataset, seed: int = 0):
    """The discriminator's labels, logits and corrupted inputs on `dataset` (fresh masks, seeded).

    Returns:
        (labels, logits, token_ids, weights, padding_mask): numpy arrays `[examples, S]`;
        `weights` are the loss weights (objective electra_15 weighs masked positions only).
    """
    from keras import ops

    from electra_tf.pretraining.objectives import StepContext

    keys = ("labels", "logits", "token_ids", "weights", "padding_mask")
    parts: dict[str, list] = {key: [] for key in keys}
    for index, batch in enumerate(dataset):
        size = int(batch["token_ids"].shape[0])
        context = StepContext(
            seed=seed,
            step=ops.convert_to_tensor(index, "int64"),
            example_index=ops.arange(size, dtype="int32"),
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
    from electra_tf.metrics import roc_auc

    labels, logits, _, weights, _ = detection_pass(model, dataset, seed)
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
        baseline_files: TFRecord files the baselines are counted on (normally the
            training files); None or empty: no bigram baseline, and the unigram baseline
            counts `files` themselves.
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

    from electra_tf.config import ConfigError
    from electra_tf.data.pipeline import pretraining_dataset
    from electra_tf.metrics import roc_auc

    length = model.config.data.sequence_length
    total = sum(counts)
    if total == 0:
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
        labels, logits, token_ids, weights, padding_mask = detection_pass(model, data)
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
            unigram_baseline_accuracy(files, length, special, baseline_files or None), 4
        )
        report["mlm_loss"] = round(metrics["mlm_loss"], 4)
    if "replaced_fraction" in metrics:
        report["replaced_fraction"] = round(metrics["replaced_fraction"], 4)
    return report


def evaluate_checkpoint(checkpoint, data: str, batch_size: int = 32, log=None) -> dict:
    """`held_out_report` of a checkpoint on the packed examples `data` names.

    The bigram baseline counts the checkpoint's own training files (its config's
    `data.train_files`); when they cannot be read, the report has no bigram figure
    and `log` is told why.

    Args:
        checkpoint: a run folder or one of its `step-N` checkpoints.
        data: TFRecord files (comma-separated, globs) or a prepare folder, held out.
        batch_size: evaluation batch size.
        log: called with one line when the bigram baseline is left out.

    Returns:
        {"checkpoint", "examples", **held_out_report}.
    """
    from electra_tf.data.tfrecords import DataError, count_records, resolve_files
    from electra_tf.pretraining.checkpoint import load_pretrainer

    files, counts, _ = resolve_files(data)
    if counts is None:
        counts = count_records(files)
    model = load_pretrainer(checkpoint)
    config = model.config.data
    special = {config.pad_id, config.unk_id, config.cls_id, config.sep_id, config.mask_id}
    try:  # the bigram baseline counts the text the model was trained on
        baseline_files = resolve_files(config.train_files)[0] if config.train_files else []
    except DataError as error:
        if log is not None:
            log(f"no bigram baseline: {error}")
        baseline_files = []
    report = held_out_report(
        model, files, counts, special, batch_size, baseline_files=baseline_files
    )
    return {"checkpoint": str(checkpoint), "examples": sum(counts), **report}
