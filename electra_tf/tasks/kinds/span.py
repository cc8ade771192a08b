"""Extractive question answering (SQuAD 1.1 and 2.0): windows, start/end heads, answerability.

A benchmark kind for now: `electra-tf finetune --task squad1|squad2` trains it
through the engine and reports SQuAD's EM/F1; it is not read from the user's
files, predicted from the CLI or exported yet.
"""

from __future__ import annotations

import keras

import electra_tf.metrics as metric_functions
from electra_tf.data.batching import batch_dataset
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.datasets import squad
from electra_tf.tasks.kind import Kind, no_answer_collapse
from electra_tf.tasks.question_answerer import window_outputs
from electra_tf.tasks.registry import register_kind
from electra_tf.tasks.span_extractor import ElectraSpanExtractor

__all__ = ["Span"]


@register_kind
class Span(Kind):
    """SQuAD spans: windows over long contexts, start/end heads, answerability for 2.0."""

    name = "span"
    metrics = ("exact", "f1")
    from_files = False
    servable = False

    def __init__(self, task, splits: dict):
        super().__init__(task, splits)
        self.main_metric = task.metrics[-1]  # F1
        self._features = {}

    @classmethod
    def check_config(cls, config) -> None:
        """Refuses a `max_query_length` that leaves a window no room for the context."""
        squad.check_query_room(config.max_seq_length, config.max_query_length)

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
        outputs = window_outputs(model, features.inputs, self.config.eval_batch_size)
        predictions = squad.predict_answers(
            self.examples[split],
            features,
            outputs,
            self.task.name == "squad2",
            self.config.n_best,
            self.config.max_answer_length,
        )
        references = {e.qid: e.answers for e in self.examples[split]}
        self.note_collapse(split, no_answer_collapse(split, predictions, references))
        return metric_functions.squad_scores(predictions, references)
