"""Extractive question answering on the user's files: SQuAD JSON, or tables of questions.

Files: SQuAD v1.1/v2.0 JSON (`{"data": [{"paragraphs": [{"context", "qas"}]}]}`), or
CSV/TSV/JSON Lines rows with a question, a context and an answer column (`Columns`:
`question`, `context`, `answers`, optional `answer_start`; the answer a text, a list of
accepted texts, SQuAD's `[{"text", "answer_start"}, ...]` or its `{"text": [...],
"answer_start": [...]}`). A train or dev row with an empty answer is unanswerable and makes
the task SQuAD 2.0; train and dev files without the answer column are refused (a test file
without answers is only predicted: never scored, and it never decides 2.0). Question ids
are unique within a file. A table with the question and context columns (and no text
column) is read as question answering without `--kind`. A training row whose answer is not
at its offset (or, without one, not in its context) is skipped and counted with its row
number; in dev and test files it is kept for scoring.

Training is the reference's (`ElectraQuestionAnswerer`): windows with doc stride, the
answer's first and last WordPiece, answerability under 2.0. Scores are SQuAD's official
exact match and F1 (`electra_tf.metrics.squad_scores`); the epoch is chosen on dev F1.
Under 2.0 the no-answer threshold is chosen on dev (`squad.best_threshold`, the official
script's search) at each epoch and kept with the model; test is scored at it, never
choosing it. Predictions: the answer, its character offsets in the context, its score
and the no-answer probability.

The SavedModel's `serving_default` takes `question` and `context` (tf.string `[batch]`)
and runs all of the above in the graph: whitespace words with their offsets, WordPiece,
windows by `doc_stride` for contexts longer than fit, the heads, the reference's candidate
search (the `n_best` starts and ends of each window, in the context, in order, at most
`max_answer_length` tokens, starting where the window gives the token its most context),
the best window, the words back to characters and the threshold. It returns `answer`
(tf.string, "" when there is none), `start` and `end` (int32 character offsets into the
context as given), `score` and `no_answer`; `serve` takes ids and returns the logits.
"""

from __future__ import annotations

from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.datasets import squad
from electra_tf.metrics import squad_scores
from electra_tf.tasks.kind import Inputs, Kind, no_answer_collapse, skipped_rows
from electra_tf.tasks.kinds._questions import (
    is_question_table,
    is_squad_json,
    read_questions,
    read_squad_file,
    table_questions,
    trainable,
)
from electra_tf.tasks.kinds._text import encoder_and_preprocessor
from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
from electra_tf.tasks.question_answerer_preprocessor import ElectraQuestionAnswererPreprocessor
from electra_tf.tasks.registry import register_kind

__all__ = ["QuestionAnswering", "read_questions"]


def _rows_product(value, kernel):
    """`value @ kernel` over `value`'s last axis, as one 2-D product of its rows.

    Never a batched product of a `[W, K, L, D]` tensor and a 2-D kernel: with K = 1 (a joint
    head's `beam_size=1`), TensorFlow 2.20's oneDNN batched matmul overruns its buffers on
    AVX-512 CPUs and corrupts the heap (tensorflow/tensorflow#117700).
    """
    import tensorflow as tf

    rows = tf.matmul(tf.reshape(value, [-1, value.shape[-1]]), kernel)
    return tf.reshape(rows, tf.concat([tf.shape(value)[:-1], [rows.shape[-1]]], 0))


@register_kind
class QuestionAnswering(Kind):
    """Answers as spans of the context with `ElectraQuestionAnswerer` (see the module
    docstring).

    >>> QuestionAnswering.shown_inputs("Who?", "Ada.")
    {'question': 'Who?', 'context': 'Ada.'}
    """

    name = "question_answering"
    metrics = ("f1", "exact")
    named_labels = False

    def __init__(self, task, splits: dict):
        super().__init__(task, splits)
        # A training answer that cannot be placed trains nothing: drop it from train only.
        if "train" in splits:
            self.examples = {**splits, "train": trainable(task, splits["train"])}
        # Train and dev decide SQuAD 2.0 (or the task, as squad2); test never does (nor a
        # file without answers).
        self.version_2 = task.version_2 or any(
            not e.answers for name, rows in splits.items() if name != "test"
            for e in rows if e.labelled
        )  # fmt: skip
        self.main_metric = "f1"  # also for --task squad1|squad2, whose metrics list exact first
        self.eval_batch_size = 128
        self._windows = {}

    # -- the user's files ----------------------------------------------------------------------

    @classmethod
    def recognizes(cls, path, columns) -> bool:
        """SQuAD JSON, or a table with the question and context columns and no text column."""
        return is_squad_json(Path(path)) or is_question_table(Path(path), columns)

    @classmethod
    def check_config(cls, config) -> None:
        """Refuses a `max_query_length` that leaves a window no room for the context."""
        squad.check_query_room(config.max_seq_length, config.max_query_length)

    @classmethod
    def read(cls, path, columns, needs_labels: bool):
        return read_questions(path, columns, needs_labels)

    @classmethod
    def label_names(cls, rows: list, given=None) -> tuple[list, str]:
        if given:
            raise ConfigError("Question answering has no label names; drop --labels.")
        return [], "answers are spans of the context"

    @classmethod
    def check_labels(cls, split: str, rows: list, labels: list) -> None:
        return None

    @classmethod
    def prepare(cls, rows: list) -> list:
        return rows

    @classmethod
    def task_columns(cls, columns) -> tuple:
        return (columns.question, columns.context, columns.answer)

    # -- the engine's job ----------------------------------------------------------------------

    def build(self, init, config) -> ElectraQuestionAnswerer:
        self.eval_batch_size = config.eval_batch_size
        encoder, preprocessor = encoder_and_preprocessor(
            init, config, ElectraQuestionAnswererPreprocessor
        )
        preprocessor.doc_stride = config.doc_stride
        preprocessor.max_query_length = config.max_query_length
        model = ElectraQuestionAnswerer(
            encoder, preprocessor, version_2=self.version_2, n_best=config.n_best,
            max_answer_length=config.max_answer_length, dropout=config.dropout,
            joint_end=config.joint_end, beam_size=config.beam_size,
            answerable_loss_weight=config.answerable_loss_weight, no_answer=config.no_answer,
            span_head_init=config.span_head_init,
        )  # fmt: skip
        model.build()
        self._windows.clear()
        self.windows(model, "train")  # the engine's steps count training windows
        return model

    def compile_arguments(self, model) -> dict:
        return {"loss": model.default_loss(), "loss_weights": model.default_loss_weights()}

    def windows(self, model, split: str):
        if split not in self._windows:
            self._windows[split] = model.preprocessor.windows(self.examples[split])
        return self._windows[split]

    def rows(self) -> int:
        """Training windows (known once `build` has made the preprocessor)."""
        return len(self._windows["train"].start_positions)

    def fit(self, model, config, seed: int, initial_epoch: int, callbacks) -> None:
        windows = self.windows(model, "train")
        model.fit_packed(
            model.packed_inputs(windows), model.targets(windows), batch_size=config.batch_size,
            epochs=config.epochs, initial_epoch=initial_epoch, seed=seed,
            group_by_length=config.group_by_length, callbacks=callbacks, verbose=0,
        )  # fmt: skip

    def splits(self) -> list[str]:
        """The evaluation splits with answers to score (a file without them is predicted)."""
        return [
            n for n, rows in self.examples.items()
            if n != "train" and rows and all(e.labelled for e in rows)
        ]  # fmt: skip

    def _details(self, model, split: str) -> dict:
        from electra_tf.tasks.question_answerer import window_outputs

        windows = self.windows(model, split)
        outputs = self.remembered(
            model, split, lambda: window_outputs(model, windows.inputs, self.eval_batch_size)
        )
        return squad.answer_details(
            self.examples[split], windows, outputs, model.version_2, model.n_best,
            model.max_answer_length, float(model.threshold.numpy()), model.no_answer,
        )  # fmt: skip

    def score(self, model, split: str) -> dict:
        details = self._details(model, split)
        references = {e.qid: e.answers for e in self.examples[split]}
        if model.version_2 and split == self.selection:
            # Dev chooses the threshold; the weights kept with it carry it to test.
            threshold, _ = squad.best_threshold(details, references)
            model.threshold.assign(threshold)
            details = squad.with_threshold(details, threshold)
        answers = {qid: value["answer"] for qid, value in details.items()}
        self.note_collapse(split, no_answer_collapse(split, answers, references))
        scores = squad_scores(answers, references)
        if model.version_2:
            scores["threshold"] = float(model.threshold.numpy())
        return scores

    def predictions(self, model, split: str) -> list[dict]:
        details = self._details(model, split)
        rows = []
        for example in self.examples[split]:
            value = details[example.qid]
            row = {"id": example.qid, "question": example.question}
            row.update({k: value[k] for k in ("answer", "start", "end", "score", "no_answer")})
            if example.labelled:
                row["gold"] = list(example.answers)
            rows.append(row)
        return rows

    # -- prediction ----------------------------------------------------------------------------

    @classmethod
    def read_inputs(cls, path, columns, format: str | None = None):
        from electra_tf.datasets.files import Columns

        known = {k: v for k, v in columns.items() if k in Columns.__dataclass_fields__ and v}
        spec, path = Columns(**{**known, "format": format}), Path(path)
        if is_squad_json(path):  # rows are the questions' places; every one has an id
            examples, report = read_squad_file(path, False)
            ids = {e.row: e.qid for e in examples}
        else:
            examples, report, ids = table_questions(path, spec, False)
        return Inputs(
            [e.question for e in examples], [e.context for e in examples],
            [e.row for e in examples], skipped_rows(report), ids or None,
        )  # fmt: skip

    @classmethod
    def predict(cls, model, texts, pairs=None, batch_size: int = 32) -> list[dict]:
        if pairs is None:
            raise ConfigError("A question answerer needs a context for every question.")
        return model.predict_answers(texts, pairs, batch_size=batch_size)

    @classmethod
    def shown_inputs(cls, text, pair) -> dict:
        return {"question": text, "context": pair}

    # -- the SavedModel ------------------------------------------------------------------------

    @classmethod
    def serving_inputs(cls, pair: bool) -> list:
        import tensorflow as tf

        return [tf.TensorSpec([None], tf.string, name="question"),
                tf.TensorSpec([None], tf.string, name="context")]  # fmt: skip

    @classmethod
    def serving_text(cls, inputs) -> list:
        return list(inputs)

    @classmethod
    def head_weights(cls, model) -> list:
        layers = (model.start_dense, model.end_dense, model.answer_hidden, model.answer_dense)
        if model.joint_end:
            layers += (model.end_hidden,)
        return [w for layer in layers for w in layer.weights] + [model.threshold]

    @classmethod
    def serving_settings(cls, model) -> dict:
        pre = model.preprocessor
        return {"doc_stride": pre.doc_stride, "max_query_length": pre.max_query_length,
                "n_best": model.n_best, "max_answer_length": model.max_answer_length,
                "version_2": model.version_2, "joint_end": model.joint_end,
                "no_answer": model.no_answer}  # fmt: skip

    @classmethod
    def head(cls, module, sequence, shape, padding_mask=None):
        """Start, end (`[W, L]`) and answerability (`[W]`) logits of the encoder's output;
        with the joint head, the end logits `[W, K, L]` of the `[W, K]` `start_candidates`
        (the best starts, padding excluded)."""
        import tensorflow as tf

        model = module._keras.model
        x = tf.reshape(sequence, [shape[0], shape[1], sequence.shape[-1]])  # empty batches too

        def dense(layer, value):
            return tf.nn.bias_add(_rows_product(value, layer.kernel), layer.bias)

        hidden = tf.nn.gelu(dense(model.answer_hidden, x[:, 0, :]), approximate=False)
        start = tf.squeeze(dense(model.start_dense, x), -1)
        out = {"start_logits": start,
               "answerable_logits": tf.squeeze(dense(model.answer_dense, hidden), -1)}  # fmt: skip
        if not model.joint_end:
            out["end_logits"] = tf.squeeze(dense(model.end_dense, x), -1)
            return out
        penalty = (1.0 - tf.cast(padding_mask, tf.float32)) * -10000.0
        beam = tf.minimum(model.beam_size, tf.shape(start)[1])
        _, starts = tf.math.top_k(start + penalty, beam)  # [W, K]
        kernel, half = model.end_hidden.kernel, model.encoder.hidden_dim
        tokens = _rows_product(x, kernel[:half])[:, None, :, :]  # [W, 1, L, D]
        chosen = _rows_product(tf.gather(x, starts, batch_dims=1), kernel[half:])[:, :, None, :]
        features = tf.nn.gelu(tokens + chosen + model.end_hidden.bias, approximate=False)
        out["end_logits"] = tf.squeeze(dense(model.end_dense, features), -1)  # [W, K, L]
        out["start_candidates"] = starts
        return out

    @classmethod
    def serve(cls, module, question, context) -> dict:
        from electra_tf.tasks.kinds._answer_graph import answer_graph

        return answer_graph(module, question, context)

    @classmethod
    def decode_serving(cls, outputs: dict, labels) -> list[dict]:
        return [
            {"answer": a.decode(), "start": int(s), "end": int(e), "score": float(p),
             "no_answer": float(n)}
            for a, s, e, p, n in zip(outputs["answer"], outputs["start"], outputs["end"],
                                     outputs["score"], outputs["no_answer"], strict=True)
        ]  # fmt: skip
