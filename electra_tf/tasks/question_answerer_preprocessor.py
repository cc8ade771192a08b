"""Questions and contexts (raw strings) to windows of the encoder's inputs, and back."""

from __future__ import annotations

import keras

from electra_tf.datasets import squad
from electra_tf.tasks.text_classifier_preprocessor import WordPiecePreprocessor

__all__ = ["ElectraQuestionAnswererPreprocessor", "as_examples"]


def as_examples(questions, contexts, answers=None, answer_starts=None):
    """(`SquadExample`s, {row index: why its answer cannot be trained on}) of strings.

    `answers[i]` is the answer text, a list of accepted texts (the first is trained on), or
    "", None or [] for an unanswerable question; `answer_starts[i]` is the first answer's
    character offset in the context (None: its first occurrence).
    """
    if isinstance(questions, str) or isinstance(contexts, str):
        raise ValueError("Give batches (lists) of questions and contexts, not single strings.")
    questions, contexts = list(questions), list(contexts)
    if len(questions) != len(contexts):
        raise ValueError(f"{len(questions)} questions but {len(contexts)} contexts.")
    examples, problems = [], {}
    for i, (question, context) in enumerate(zip(questions, contexts, strict=True)):
        given = None if answers is None else answers[i]
        if given is None or given == "":
            given = []
        elif isinstance(given, str):
            given = [given]
        start = None if answer_starts is None else answer_starts[i]
        example, problem = squad.squad_example(str(i), str(question), str(context), given, start)
        if problem:
            problems[i] = problem
        examples.append(example)
    return examples, problems


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraQuestionAnswererPreprocessor(WordPiecePreprocessor):
    """WordPiece windows of `[CLS] question [SEP] context part [SEP]`, as the reference.

    A context longer than fits is cut into windows sliding by `doc_stride` tokens; the
    question keeps at most `max_query_length` tokens. Each window maps its tokens back to
    the context's words and their character offsets (`electra_tf.datasets.squad`).

    Args:
        vocabulary, lower_case, strip_accents, pad_to: as `ElectraTextClassifierPreprocessor`.
        sequence_length: a window's length (384 in the reference).
        doc_stride: how far each window slides (tokens).
        max_query_length: the question's longest part (tokens).

    Example:

    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "who", "ada", "lives", "in"]
    >>> preprocessor = ElectraQuestionAnswererPreprocessor(tokens, sequence_length=8,
    ...     doc_stride=2, max_query_length=2)
    >>> windows = preprocessor.windows(as_examples(["who"], ["ada lives in in ada"])[0])
    >>> windows.inputs["token_ids"].tolist()
    [[2, 5, 3, 6, 7, 8, 8, 3], [2, 5, 3, 8, 8, 6, 3, 0]]
    """

    def __init__(
        self,
        vocabulary=None,
        lower_case: bool = True,
        strip_accents: bool | None = None,
        sequence_length: int = 384,
        doc_stride: int = 128,
        max_query_length: int = 64,
        pad_to: str = "longest",
        **kwargs,
    ):
        super().__init__(vocabulary, lower_case, strip_accents, sequence_length, pad_to, **kwargs)
        self.doc_stride = int(doc_stride)
        self.max_query_length = int(max_query_length)

    def windows(self, examples) -> squad.SquadFeatures:
        """The windows of `SquadExample`s (`as_examples`), with their training spans."""
        if self.tokenizer is None:
            raise ValueError("This preprocessor has no vocabulary yet; call set_vocabulary.")
        return squad.make_features(
            examples,
            self.tokenizer,
            max_seq_length=self.sequence_length,
            doc_stride=self.doc_stride,
            max_query_length=self.max_query_length,
        )

    def get_config(self):
        config = super().get_config()
        config.update(doc_stride=self.doc_stride, max_query_length=self.max_query_length)
        return config
