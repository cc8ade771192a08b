"""`ElectraQuestionAnswerer`: extractive question answering on raw questions and contexts."""

from __future__ import annotations

import keras
import numpy as np

from electra_tf.datasets import squad
from electra_tf.tasks.base import (
    TaskModel,
    batch_outputs,
    encoder_and_preprocessor,
)
from electra_tf.tasks.question_answerer_preprocessor import (
    ElectraQuestionAnswererPreprocessor,
    as_examples,
)
from electra_tf.tasks.span_extractor import ElectraSpanExtractor

__all__ = ["ElectraQuestionAnswerer", "window_outputs", "check_no_answer", "NO_ANSWER_RULES"]

#: The SQuAD 2.0 no-answer rules (`ElectraQuestionAnswerer`'s `no_answer`).
NO_ANSWER_RULES = ("answerability", "null_score")


def check_no_answer(rule: str, joint_end: bool) -> str:
    """`rule` if it is a known no-answer rule that fits the head; else a ValueError."""
    if rule not in NO_ANSWER_RULES:
        raise ValueError(f'no_answer must be "answerability" or "null_score", got {rule!r}.')
    if rule == "null_score" and joint_end:
        raise ValueError(
            'no_answer="null_score" needs the plain head (one end row per window); '
            "set joint_end=false or no_answer=answerability."
        )
    return rule


def window_outputs(model, inputs: dict, batch_size: int) -> dict:
    """The span model's outputs over `[W, S]` windows, in length-sorted batches cut as
    `fit_packed` cuts them (`batch_outputs`), back in window order; start and end logits
    padded to `S` with -10000."""
    rows, width = inputs["token_ids"].shape
    collected = {}
    for index, output in batch_outputs(model, inputs, batch_size):
        for name, value in output.items():
            if name in ("start_logits", "end_logits"):
                pad = [(0, 0)] * (value.ndim - 1) + [(0, width - value.shape[-1])]
                value = np.pad(value, pad, constant_values=-10000.0)
            collected.setdefault(name, [None] * rows)
            for row, i in enumerate(index):
                collected[name][i] = value[row]
    return {name: np.stack(values) for name, values in collected.items()}


def _of_strings(spec) -> bool:
    import tensorflow as tf

    specs = tf.nest.flatten(spec)
    return len(specs) == 3 and all(s.dtype == tf.string for s in specs)


def _strings_of(dataset) -> tuple[tuple[list, list], list]:
    """((questions, contexts), answers) of a Dataset of `((question, context), answer)`."""
    import numpy as np

    columns = [[], [], []]
    for element in dataset.as_numpy_iterator():
        (question, context), answer = element
        for column, value in zip(columns, (question, context, answer), strict=True):
            column.extend(np.asarray(value).reshape(-1).tolist())
    questions, contexts, answers = ([v.decode("utf-8") for v in c] for c in columns)
    return (questions, contexts), answers


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraQuestionAnswerer(TaskModel, ElectraSpanExtractor):
    """ELECTRA's encoder with start/end heads and an answerability head, on raw strings.

    `fit((questions, contexts), answers)` trains on windows of the contexts (the
    reference's recipe: the answer's first and last WordPiece in the window that holds it,
    [CLS] elsewhere, cross-entropy on start and end, and under SQuAD 2.0 a sigmoid
    cross-entropy on whether the window holds the answer). `predict_answers(questions,
    contexts)` returns each question's answer text and its character offsets in the
    context.

    Args:
        encoder: an `ElectraEncoder`.
        preprocessor: an `ElectraQuestionAnswererPreprocessor`, or None for id inputs only.
        version_2: SQuAD 2.0: some questions have no answer (trains the answerability head
            and lets `predict_answers` answer "").
        threshold: the answerability logit from which a 2.0 question is answered (choose it
            on dev: `electra_tf.datasets.squad.best_threshold`); a non-trainable variable,
            so the weights saved with the best epoch carry the threshold chosen with them.
        n_best, max_answer_length: the candidate starts/ends per window, the longest answer
            (tokens).
        joint_end, beam_size: the reference's joint head: the end scored given the start
            (trained with the true start; at inference each of the `beam_size` best starts
            gets its own `n_best` ends).
        answerable_loss_weight: the answerability loss's weight under 2.0 (1.0: the
            reference's; 0.0: BertForQuestionAnswering's span loss only).
        no_answer: the 2.0 rule, "answerability" (the answerability logit, the reference's)
            or "null_score" (transformers': the best span's score minus the [CLS] null
            score, `squad.null_scores`); either is compared with `threshold`.
        span_head_init: the start and end kernels' initial law at the encoder's range,
            "truncated_normal" (the reference's) or "normal" (`BertForQuestionAnswering`'s).

    Example:

    >>> from electra_tf.models.encoder import ElectraEncoder
    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "where", "ada", "lives",
    ...     "in", "rome"]
    >>> encoder = ElectraEncoder(vocabulary_size=10, num_layers=1, hidden_dim=8,
    ...     embedding_dim=8, num_heads=2, intermediate_dim=16, max_sequence_length=16)
    >>> reader = ElectraQuestionAnswerer(encoder,
    ...     ElectraQuestionAnswererPreprocessor(tokens, sequence_length=16))
    >>> row = reader.predict_answers(["Where?"], ["Ada lives in Rome."])[0]
    >>> "Ada lives in Rome."[row["start"]:row["end"]] == row["answer"]
    True
    """

    def __init__(
        self,
        encoder,
        preprocessor=None,
        version_2: bool = False,
        threshold: float = 0.0,
        n_best: int = 20,
        max_answer_length: int = 30,
        dropout: float = 0.1,
        joint_end: bool = False,
        beam_size: int = 20,
        answerable_loss_weight: float = 1.0,
        no_answer: str = "answerability",
        span_head_init: str = "truncated_normal",
        name="electra_question_answerer",
        **kwargs,
    ):
        super().__init__(encoder, joint_end=bool(joint_end), beam_size=int(beam_size), name=name,
                         span_head_init=span_head_init, **kwargs)  # fmt: skip
        self.preprocessor = preprocessor
        self.version_2 = bool(version_2)
        self.threshold = keras.Variable(
            float(threshold), trainable=False, dtype="float32", name="answer_threshold"
        )
        self.n_best = int(n_best)
        self.max_answer_length = int(max_answer_length)
        self.dropout_rate = dropout
        self.answerable_loss_weight = float(answerable_loss_weight)
        self.no_answer = check_no_answer(no_answer, self.joint_end)
        self.kind = "question_answering"

    @property
    def decision_weights(self) -> list:
        """Weights read after the forward pass only (the answer search's threshold): the
        window outputs do not depend on them (`Kind.remembered` leaves them out)."""
        return [self.threshold]

    @classmethod
    def from_source(
        cls, source: str, sequence_length: int = 384, doc_stride: int = 128,
        max_query_length: int = 64, version_2: bool = False, dropout: float = 0.1,
        vocab_file=None, pad_to: str = "longest", joint_end: bool = False, beam_size: int = 20,
    ) -> ElectraQuestionAnswerer:  # fmt: skip
        """A new question answerer on the encoder of SOURCE (anything `--init` accepts)."""
        from electra_tf.tasks.initialization import load_initialization

        encoder, preprocessor = encoder_and_preprocessor(
            load_initialization(str(source), vocab_file), ElectraQuestionAnswererPreprocessor,
            dropout=dropout, sequence_length=sequence_length, pad_to=pad_to,
        )  # fmt: skip
        preprocessor.doc_stride = int(doc_stride)
        preprocessor.max_query_length = int(max_query_length)
        model = cls(encoder, preprocessor, version_2=version_2, dropout=dropout,
                    joint_end=joint_end, beam_size=beam_size)  # fmt: skip
        model.build()
        return model

    def default_loss(self) -> dict:
        """Cross-entropy on the start and on the end, sigmoid cross-entropy on answerability."""
        sparse = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return {
            "start_logits": sparse,
            "end_logits": sparse,
            "answerable_logits": keras.losses.BinaryCrossentropy(from_logits=True),
        }

    def default_loss_weights(self) -> dict:
        """Half the start and end losses each (the reference's mean), answerability for 2.0
        at `answerable_loss_weight`."""
        return {
            "start_logits": 0.5,
            "end_logits": 0.5,
            "answerable_logits": self.answerable_loss_weight if self.version_2 else 0.0,
        }

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """`TaskModel.compile`, with `default_loss_weights` when the loss is "auto"."""
        if isinstance(loss, str) and loss == "auto":
            kwargs.setdefault("loss_weights", self.default_loss_weights())
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def packed_inputs(self, windows: squad.SquadFeatures) -> dict:
        """The windows' model inputs for training: the joint head also reads the true start."""
        if not self.joint_end:
            return windows.inputs
        return {**windows.inputs, "start_positions": windows.start_positions}

    @staticmethod
    def targets(windows: squad.SquadFeatures) -> dict:
        """The training targets of windows (start, end, answerable)."""
        return {
            "start_logits": windows.start_positions,
            "end_logits": windows.end_positions,
            "answerable_logits": windows.answerable,
        }

    def fit(self, x=None, y=None, batch_size: int = 32, epochs: int = 1, seed: int | None = None,
            group_by_length: bool | None = None, answer_starts=None, **kwargs):  # fmt: skip
        """`keras.Model.fit` on `x = (questions, contexts)` and `y` = answers (a text, a
        list of accepted texts, or "" for none), each answer at `answer_starts[i]` (default:
        its first occurrence). `x` may also be a `tf.data.Dataset` of strings
        `((question, context), answer)`, batched or not: it is read once (windows are made
        in Python), then trained on as lists; or of (window inputs, `targets`)."""
        import tensorflow as tf

        if isinstance(x, tf.data.Dataset):
            if not _of_strings(x.element_spec):
                return self.fit_dataset(x, epochs=epochs, **kwargs)
            x, y = _strings_of(x)
        questions, contexts = x
        examples, problems = as_examples(questions, contexts, y, answer_starts)
        if problems:
            row, problem = next(iter(problems.items()))
            raise ValueError(
                f"Answer {row} ({y[row]!r}) is not in its context at the given offset "
                f"({problem}); fix the row or drop it ({len(problems)} such rows)."
            )
        unanswerable = any(not e.answers for e in examples)
        if unanswerable and not self.version_2:
            if self.compiled:
                raise ValueError(
                    "Some questions have no answer but this model was compiled for SQuAD 1.1; "
                    "make it with version_2=True."
                )
            self.version_2 = True
        windows = self.preprocessor.windows(examples)
        return self.fit_packed(
            self.packed_inputs(windows), self.targets(windows), batch_size=batch_size,
            epochs=epochs, seed=seed, group_by_length=group_by_length, **kwargs,
        )  # fmt: skip

    def answer_details(self, examples, batch_size: int = 32) -> dict:
        """`electra_tf.datasets.squad.answer_details` of `SquadExample`s at this model's
        threshold (question id -> answer, offsets, score, no_answer, best span)."""
        windows = self.preprocessor.windows(examples)
        outputs = window_outputs(self, windows.inputs, batch_size)
        return squad.answer_details(
            examples, windows, outputs, self.version_2, self.n_best, self.max_answer_length,
            float(self.threshold.numpy()), self.no_answer,
        )  # fmt: skip

    def predict_answers(self, questions, contexts, batch_size: int = 32) -> list[dict]:
        """Per question: `answer` ("" for none), `start` and `end` (character offsets in its
        context: `context[start:end] == answer`), `score` and `no_answer` (2.0)."""
        examples, _ = as_examples(questions, contexts)
        details = self.answer_details(examples, batch_size)
        keys = ("answer", "start", "end", "score", "no_answer")
        return [{k: details[e.qid][k] for k in keys} for e in examples]

    def get_config(self):
        return {
            "name": self.name,
            **self.parts_config(),
            "version_2": self.version_2,
            "threshold": float(self.threshold.numpy()),
            "n_best": self.n_best,
            "max_answer_length": self.max_answer_length,
            "dropout": self.dropout_rate,
            "joint_end": self.joint_end,
            "beam_size": self.beam_size,
            "answerable_loss_weight": self.answerable_loss_weight,
            "no_answer": self.no_answer,
            "span_head_init": self.span_head_init,
        }

    @classmethod
    def from_config(cls, config):
        return TaskModel.from_config.__func__(cls, config)
