"""What differs between kinds of fine-tuning task: features, model, loss and scoring.

The driver (`electra_tf.finetuning.run.finetune`) is the same for every task:
it encodes the splits, then for each seed builds a model on a fresh copy of
the encoder, trains it with the layer-wise AdamW schedule and scores every
evaluation split. A kind plugs in the four task-specific parts:

- `SequenceKind` (classification and regression): `[CLS] A [SEP] B [SEP]`
  features, the [CLS] head, cross-entropy or MSE, the task's metrics
  (accuracy, F1, Matthews, Spearman, Pearson);
- `SpanKind` (SQuAD 1.1 and 2.0): windowed features, start/end span heads
  with an answerability classifier, BERT's decoding and SQuAD's EM/F1.
"""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import tensorflow as tf

import electra_tf.metrics as metric_functions
from electra_tf.data.inputs import pack_inputs
from electra_tf.finetuning import squad
from electra_tf.finetuning.tasks import Task
from electra_tf.models.finetuning import ElectraClassifier, ElectraSpanExtractor

__all__ = ["Encoded", "SequenceKind", "SpanKind", "kind_of", "encode_examples", "score"]


@dataclasses.dataclass
class Encoded:
    """One split, ready for the model.

    Attributes:
        inputs: int32 `[rows, S]` arrays `token_ids`, `padding_mask`, `segment_ids`.
        targets: what the loss compares with (labels, or the span targets).
        rows: training rows (examples, or windows for spans).
        examples: the split's examples (spans need them to decode answers).
        extra: kind-specific data (the span windows' features).
    """

    inputs: dict
    targets: object
    rows: int
    examples: list = dataclasses.field(default_factory=list)
    extra: object = None


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
    functions = {
        "accuracy": metric_functions.accuracy,
        "f1": metric_functions.f1_binary,
        "mcc": metric_functions.matthews_corrcoef,
        "spearman": metric_functions.spearman,
        "pearson": metric_functions.pearson,
    }
    return {name: functions[name](labels, predictions) for name in task.metrics}


def _fit(model, inputs, targets, *, epochs, batch_size, seed) -> list[float]:
    dataset = tf.data.Dataset.from_tensor_slices((inputs, targets))
    size = int(len(next(iter(inputs.values()))))
    dataset = dataset.shuffle(size, seed=seed, reshuffle_each_iteration=True)
    # The dataset shuffles itself (seeded); Keras would warn about and ignore `shuffle`.
    history = model.fit(
        dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE),
        epochs=epochs,
        shuffle=False,
        verbose=0,
    )
    return [float(x) for x in history.history["loss"]]


class SequenceKind:
    """Classification and regression on the [CLS] vector."""

    def encode(self, examples, tokenizer, task: Task, config) -> Encoded:
        inputs, labels = encode_examples(examples, tokenizer, task, config.max_seq_length)
        return Encoded(inputs, labels, len(labels), list(examples))

    def build_model(self, encoder, task: Task, config):
        model = ElectraClassifier(encoder, task.num_outputs, dropout=config.dropout)
        model.build()
        return model

    def fit(self, model, train: Encoded, optimizer, task: Task, config, seed: int) -> list[float]:
        if task.kind == "regression":
            loss = keras.losses.MeanSquaredError()
        else:
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        model.compile(optimizer=optimizer, loss=loss)
        return _fit(
            model,
            train.inputs,
            train.targets,
            epochs=config.epochs,
            batch_size=config.batch_size,
            seed=seed,
        )

    def score(self, model, split: Encoded, task: Task, config) -> dict:
        dataset = tf.data.Dataset.from_tensor_slices(split.inputs).batch(config.eval_batch_size)
        outputs = model.predict(dataset, verbose=0)
        predictions = outputs if task.kind == "regression" else np.argmax(outputs, axis=-1)
        return score(task, split.targets, predictions)


class SpanKind:
    """SQuAD spans: windows over long contexts, start/end heads, answerability for 2.0."""

    def encode(self, examples, tokenizer, task: Task, config) -> Encoded:
        features = squad.make_features(
            examples,
            tokenizer,
            max_seq_length=config.max_seq_length,
            doc_stride=config.doc_stride,
            max_query_length=config.max_query_length,
        )
        targets = {
            "start_logits": features.start_positions,
            "end_logits": features.end_positions,
            "answerable_logits": features.answerable,
        }
        rows = len(features.start_positions)
        return Encoded(features.inputs, targets, rows, list(examples), features)

    def build_model(self, encoder, task: Task, config):
        model = ElectraSpanExtractor(
            encoder, joint_end=config.joint_end, beam_size=config.beam_size
        )
        model.build()
        return model

    def fit(self, model, train: Encoded, optimizer, task: Task, config, seed: int) -> list[float]:
        version_2 = task.name == "squad2"
        inputs = dict(train.inputs)
        if model.joint_end:
            inputs["start_positions"] = train.extra.start_positions
        sparse = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        model.compile(
            optimizer=optimizer,
            loss={
                "start_logits": sparse,
                "end_logits": sparse,
                "answerable_logits": keras.losses.BinaryCrossentropy(from_logits=True),
            },
            loss_weights={
                "start_logits": 0.5,
                "end_logits": 0.5,
                "answerable_logits": 1.0 if version_2 else 0.0,
            },
        )
        return _fit(
            model,
            inputs,
            train.targets,
            epochs=config.epochs,
            batch_size=config.batch_size,
            seed=seed,
        )

    def score(self, model, split: Encoded, task: Task, config) -> dict:
        outputs = model.predict(split.inputs, batch_size=config.eval_batch_size, verbose=0)
        outputs = {k: np.asarray(v) for k, v in outputs.items()}
        predictions = squad.predict_answers(
            split.examples,
            split.extra,
            outputs,
            task.name == "squad2",
            config.n_best,
            config.max_answer_length,
        )
        references = {e.qid: e.answers for e in split.examples}
        return metric_functions.squad_scores(predictions, references)


def kind_of(task: Task):
    """The kind that fine-tunes `task`."""
    return SpanKind() if task.kind == "span" else SequenceKind()
