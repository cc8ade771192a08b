"""What differs between kinds of fine-tuning task: the model, its inputs and the scoring.

The engine (`electra_tf.finetuning.engine`) is the same for every task: epochs
of the task model's own `fit`, a dev score after each, the best epoch kept. A
job plugs in the task-specific parts for one set of splits:

- `TextJob` (single-label and multi-label classification, regression):
  `ElectraTextClassifier` on raw text (or text pairs), the task's metrics;
- `SpanJob` (SQuAD 1.1 and 2.0): windowed features, `ElectraSpanExtractor`,
  BERT's decoding and SQuAD's EM/F1;
- `electra_tf.finetuning.tagging.TaggingJob`: per-word tags, entity F1.

A job has `build(init, config)`, `compile_arguments(model)`, `rows()`,
`fit(model, config, seed, initial_epoch, callbacks)`, `score(model, split)`,
`splits()` (the labelled evaluation splits) and `main_metric`.
"""

from __future__ import annotations

import keras
import numpy as np

import electra_tf.metrics as metric_functions
from electra_tf.data.batching import batch_dataset, ordered_batches, pad_batch, row_lengths
from electra_tf.data.inputs import pack_inputs
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import read_vocabulary
from electra_tf.finetuning import squad
from electra_tf.finetuning.tasks import Task
from electra_tf.finetuning.text_classifier import ElectraTextClassifier
from electra_tf.finetuning.text_task import INPUT_NAMES, inference_function
from electra_tf.models.finetuning import ElectraSpanExtractor
from electra_tf.models.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

__all__ = ["Job", "TextJob", "SpanJob", "encode_examples", "score", "text_metrics", "METRICS"]

METRICS = {
    "accuracy": metric_functions.accuracy,
    "f1": metric_functions.f1_binary,
    "mcc": metric_functions.matthews_corrcoef,
    "spearman": metric_functions.spearman,
    "pearson": metric_functions.pearson,
    "macro_f1": metric_functions.macro_f1,
    "micro_f1": metric_functions.micro_f1,
    "exact_match": metric_functions.exact_match,
}


def encode_examples(
    examples, tokenizer, task: Task, max_seq_length: int, batch: int = 2048
) -> tuple[dict, np.ndarray]:
    """Tokenized, packed inputs (numpy, int32 `[N, max_seq_length]`) and labels of examples."""
    features = {"token_ids": [], "padding_mask": [], "segment_ids": []}
    for start in range(0, len(examples), batch):
        chunk = examples[start : start + batch]
        a = tokenizer.tokenize([e.text_a for e in chunk])
        b = tokenizer.tokenize([e.text_b for e in chunk]) if task.pair else None
        packed = pack_inputs(
            a,
            b,
            sequence_length=max_seq_length,
            cls_id=tokenizer.cls_id,
            sep_id=tokenizer.sep_id,
            pad_id=tokenizer.pad_id,
        )
        for key in features:
            features[key].append(packed[key].numpy())
    features = {
        k: np.concatenate(v) if v else np.zeros((0, max_seq_length), np.int32)
        for k, v in features.items()
    }
    dtype = np.float32 if task.kind == "regression" else np.int32
    labels = np.asarray([e.label for e in examples], dtype)
    return features, labels


def score(task: Task, labels, predictions) -> dict:
    """The task's metrics on one set (predictions: class ids, or floats for regression)."""
    return {name: METRICS[name](labels, predictions) for name in task.metrics}


def text_metrics(task: Task, targets, outputs) -> dict:
    """The task's metrics from a text classifier's targets and raw outputs."""
    if task.kind == "regression":
        return score(task, targets, np.asarray(outputs).reshape(-1))
    if task.kind == "multi_label":
        return score(task, targets, (np.asarray(outputs) >= 0.0).astype(np.float32))
    return score(task, targets, np.argmax(outputs, axis=-1))


class Job:
    """What the raw-text jobs share: the task and its splits, the main metric, the training
    rows, the labelled evaluation splits, the model's loss, an encoder and preprocessor."""

    def __init__(self, task: Task, splits: dict):
        self.task = task
        self.examples = splits
        self.main_metric = task.metrics[0]

    def compile_arguments(self, model) -> dict:
        return {"loss": model.default_loss()}

    def rows(self) -> int:
        return len(self.examples["train"])

    def splits(self) -> list[str]:
        """The evaluation splits that have labels to score."""
        return [
            name
            for name, rows in self.examples.items()
            if name != "train" and rows and all(e.label is not None for e in rows)
        ]

    def encoder_and_preprocessor(self, init, config, preprocessor_class):
        """A fresh copy of `init`'s encoder and a preprocessor of its vocabulary and casing."""
        encoder = init.build_encoder(dropout=config.dropout)
        preprocessor = preprocessor_class(
            read_vocabulary(init.vocab_file),
            lower_case=init.lower_case,
            sequence_length=min(config.max_seq_length, encoder.max_sequence_length),
        )
        return encoder, preprocessor


class TextJob(Job):
    """Classification (one label or several) and regression on the [CLS] vector.

    Args:
        task: the task (its kind, label names and metrics).
        splits: {"train": [Example], "dev": [...], ...}; rows are texts with raw labels
            (names or ids; lists for multi-label; numbers for regression).
    """

    def __init__(self, task: Task, splits: dict):
        super().__init__(task, splits)
        self._targets = {}

    def build(self, init, config) -> ElectraTextClassifier:
        encoder, preprocessor = self.encoder_and_preprocessor(
            init, config, ElectraTextClassifierPreprocessor
        )
        model = ElectraTextClassifier(
            encoder,
            labels=list(self.task.labels) or None,
            kind=self.task.kind,
            preprocessor=preprocessor,
            dropout=config.dropout,
        )
        model.build()
        return model

    def texts(self, split: str):
        rows = self.examples[split]
        if self.task.pair:
            return ([e.text_a for e in rows], [e.text_b for e in rows])
        return [e.text_a for e in rows]

    def fit(self, model, config, seed: int, initial_epoch: int, callbacks) -> None:
        model.fit(
            self.texts("train"),
            [e.label for e in self.examples["train"]],
            batch_size=config.batch_size,
            epochs=config.epochs,
            initial_epoch=initial_epoch,
            seed=seed,
            group_by_length=config.group_by_length,
            callbacks=callbacks,
            verbose=0,
        )

    def outputs(self, model, split: str, batch_size: int = 128):
        return model.predict(self.texts(split), batch_size=batch_size)

    def score(self, model, split: str) -> dict:
        if split not in self._targets:
            self._targets[split] = model.encode_labels([e.label for e in self.examples[split]])
        return text_metrics(self.task, self._targets[split], self.outputs(model, split))

    def predictions(self, model, split: str) -> list[dict]:
        """One JSON row per example: the text(s), the prediction, and the gold label if any."""
        rows = []
        for example, decoded in zip(
            self.examples[split], model.decode(self.outputs(model, split)), strict=True
        ):
            row = {"text": example.text_a}
            if example.text_b is not None:
                row["text_pair"] = example.text_b
            row.update(decoded)
            if example.label is not None:
                row["gold"] = _gold(model, example.label)
            rows.append(row)
        return rows


def _gold(model, label):
    if model.kind == "regression":
        return float(label)
    if isinstance(label, list):
        return [str(v) for v in label]
    if isinstance(label, str):
        return label
    return model.labels[int(label)]


class SpanJob:
    """SQuAD spans: windows over long contexts, start/end heads, answerability for 2.0."""

    def __init__(self, task: Task, splits: dict):
        self.task = task
        self.examples = splits
        self.main_metric = task.metrics[-1]  # F1
        self._features = {}

    def _windows(self, split: str):
        if split not in self._features:
            tokenizer = ElectraTokenizer(self.init.vocab_file, lower_case=self.init.lower_case)
            self._features[split] = squad.make_features(
                self.examples[split],
                tokenizer,
                max_seq_length=self.config.max_seq_length,
                doc_stride=self.config.doc_stride,
                max_query_length=self.config.max_query_length,
            )
        return self._features[split]

    def build(self, init, config) -> ElectraSpanExtractor:
        self.init, self.config = init, config
        model = ElectraSpanExtractor(
            init.build_encoder(dropout=config.dropout),
            joint_end=config.joint_end,
            beam_size=config.beam_size,
        )
        model.build()
        return model

    def compile_arguments(self, model) -> dict:
        sparse = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        version_2 = self.task.name == "squad2"
        return {
            "loss": {
                "start_logits": sparse,
                "end_logits": sparse,
                "answerable_logits": keras.losses.BinaryCrossentropy(from_logits=True),
            },
            "loss_weights": {
                "start_logits": 0.5,
                "end_logits": 0.5,
                "answerable_logits": 1.0 if version_2 else 0.0,
            },
        }

    def rows(self) -> int:
        return len(self._windows("train").start_positions)

    def splits(self) -> list[str]:
        return [name for name in self.examples if name != "train" and self.examples[name]]

    def fit(self, model, config, seed: int, initial_epoch: int, callbacks) -> None:
        features = self._windows("train")
        inputs = dict(features.inputs)
        if model.joint_end:
            inputs["start_positions"] = features.start_positions
        targets = {
            "start_logits": features.start_positions,
            "end_logits": features.end_positions,
            "answerable_logits": features.answerable,
        }
        dataset = batch_dataset(
            inputs,
            targets,
            batch_size=config.batch_size,
            seed=seed,
            epochs=range(initial_epoch, config.epochs),
            group=50 if config.group_by_length else 0,
        )
        model.fit(
            dataset,
            epochs=config.epochs,
            steps_per_epoch=-(-len(features.start_positions) // config.batch_size),
            initial_epoch=initial_epoch,
            callbacks=callbacks,
            shuffle=False,
            verbose=0,
        )

    def score(self, model, split: str) -> dict:
        features = self._windows(split)
        lengths = row_lengths(features.inputs["padding_mask"])
        width = features.inputs["token_ids"].shape[1]
        collected = {}
        forward = inference_function(model)
        for index in ordered_batches(lengths, self.config.eval_batch_size):
            batch = pad_batch(features.inputs, index, lengths)
            batch = {k: batch[k].astype(np.int32) for k in INPUT_NAMES}
            for name, value in forward(batch).items():
                value = np.asarray(value)
                if name in ("start_logits", "end_logits"):
                    pad = [(0, 0)] * (value.ndim - 1) + [(0, width - value.shape[-1])]
                    value = np.pad(value, pad, constant_values=-10000.0)
                collected.setdefault(name, [None] * len(lengths))
                for row, i in enumerate(index):
                    collected[name][i] = value[row]
        outputs = {name: np.stack(values) for name, values in collected.items()}
        predictions = squad.predict_answers(
            self.examples[split],
            features,
            outputs,
            self.task.name == "squad2",
            self.config.n_best,
            self.config.max_answer_length,
        )
        references = {e.qid: e.answers for e in self.examples[split]}
        return metric_functions.squad_scores(predictions, references)
