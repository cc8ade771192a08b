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

import collections
import json
from pathlib import Path

from electra_tf.config import ConfigError
from electra_tf.datasets import squad
from electra_tf.metrics import squad_scores
from electra_tf.tasks.kind import Inputs, Kind, no_answer_collapse, skipped_rows
from electra_tf.tasks.kinds._text import encoder_and_preprocessor
from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
from electra_tf.tasks.question_answerer_preprocessor import ElectraQuestionAnswererPreprocessor
from electra_tf.tasks.registry import register_kind

__all__ = ["QuestionAnswering", "read_questions"]


def _is_squad_json(path: Path) -> bool:
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    with open(path, "rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith(b"{") and b'"data"' in head and b"\n{" not in head[1:]


def _is_question_table(path: Path, columns) -> bool:
    """Whether a CSV/TSV/JSON Lines file's header (its first row) has the question and the
    context columns and no text column: a table of questions."""
    import csv

    from electra_tf.datasets.files import table_format

    try:
        kind = table_format(path, columns.format)
        with open(path, encoding="utf-8-sig", newline="") as handle:
            first = next((line for line in handle if line.strip()), "")
        if kind == "jsonl":
            names = list(json.loads(first))
        elif kind in ("csv", "tsv"):
            names = [n.strip() for n in next(csv.reader([first], delimiter="\t" if kind == "tsv"
                                                         else ","), [])]  # fmt: skip
        else:
            return False
    except (ConfigError, OSError, ValueError, TypeError):
        return False  # the reader says what is wrong with it
    return columns.question in names and columns.context in names and columns.text not in names


def _trainable(task, rows: list) -> list:
    """The training questions with a usable answer (or none); refused when none is left."""
    kept = [e for e in rows if not e.answers or e.start_word >= 0]
    if rows and not kept:
        table = all(e.qid.endswith(f":{e.row}") for e in rows)  # ids made of row numbers
        lost = [str(e.row) if table else repr(e.qid) for e in rows]
        shown = ", ".join(lost[:8]) + (", ..." if len(lost) > 8 else "")
        raise ConfigError(
            f"No training question of {task.name} has its answer in its context "
            f"(answers_not_in_context: {'rows' if table else 'questions'} {shown}); check "
            "the answer column and its answer_start offsets."
        )
    return kept


def _offset(value, where: str, column: str) -> int:
    """A character offset of a cell (a whole number, or its text), or one sentence."""
    try:
        number = float(value)
        if number.is_integer() and not isinstance(value, bool):
            return int(number)
    except (TypeError, ValueError):
        pass
    raise ConfigError(f"{where}: {column} {value!r} is not a character offset.")


def _answers(value, where: str) -> tuple[list, int | None]:
    """(accepted texts, the first one's character offset or None) of an answer cell: a text,
    a list of texts or of SQuAD's `{"text", "answer_start"}`, or SQuAD's
    `{"text": [...], "answer_start": [...]}`; `where` names the row in a refusal."""
    if value is None:
        return [], None
    if isinstance(value, dict):  # SQuAD / Hugging Face datasets: {"text": [...], ...}
        texts = value.get("text") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        starts = value.get("answer_start")
        starts = [starts] if not isinstance(starts, list | tuple) else list(starts)
        starts = [s for s in starts if s is not None]
        start = _offset(starts[0], where, "answer_start") if starts and texts else None
        return [str(t) for t in texts if str(t)], start
    if isinstance(value, list):
        texts, start = [], None
        for item in value:
            if isinstance(item, dict):  # SQuAD's answers: [{"text", "answer_start"}, ...]
                if not isinstance(item.get("text"), str):
                    raise ConfigError(
                        f"{where}: an answer {item!r} has no 'text'; write each as "
                        '{"text": "...", "answer_start": 0}, or the answer texts alone.'
                    )
                if not texts and item.get("answer_start") is not None:
                    start = _offset(item["answer_start"], where, "answer_start")
                item = item["text"]
            if str(item):
                texts.append(str(item))
        return texts, start
    return ([str(value)] if str(value) else []), None


def _refuse_repeated_ids(path: Path, examples, what: str) -> None:
    """One sentence naming the first id that two questions of the file share, and where."""
    seen = {}
    for example in examples:
        if example.qid in seen:
            raise ConfigError(
                f"{path}: question id {example.qid!r} is used by {what} {seen[example.qid]} "
                f"and {example.row}; give every question its own id (answers and scores are "
                "kept by id)."
            )
        seen[example.qid] = example.row


def _read_squad_file(path: Path, needs_labels: bool):
    """(examples, report) of a SQuAD JSON file; refused when answers are needed and none
    are given."""
    from electra_tf.datasets.readers import ReadReport

    report, counts = ReadReport(), collections.Counter()
    examples = squad.read_squad(path, report=counts)
    if needs_labels and examples and not examples[0].labelled:
        raise ConfigError(
            f"{path} has no answers (its questions have no 'answers'); give train and dev "
            "files with answers (a file without them can only be --test, and is then only "
            "predicted)."
        )
    skipped = [key.split(":", 1)[1] for key in counts if key.startswith("skipped:")]
    if skipped and needs_labels:
        report.skipped["answers_not_in_context"] = len(skipped)
        report.skipped_rows["answers_not_in_context"] = skipped
    _refuse_repeated_ids(path, examples, "questions")
    report.read = len(examples)
    return examples, report


def _answer_column(path: Path, records, columns, needs_labels: bool) -> bool:
    """Whether the table has its answer column; refused in one sentence when answers are
    needed (train and dev) and it has none: never read every question as unanswerable."""
    found = list(dict.fromkeys(key for _, record in records for key in record))
    if columns.answer in found:
        return True
    if needs_labels:
        raise ConfigError(
            f"{path} has no answer column {columns.answer!r} (its columns: {', '.join(found)}); "
            "name it with --answer-column (an empty answer marks an unanswerable question); a "
            "file without answers can only be --test, and is then only predicted."
        )
    return False


def _table_questions(path, columns, needs_labels: bool):
    """(examples, report, {row: id} of the rows with an `id`) of a CSV/TSV/JSONL table."""
    from electra_tf.datasets.files import read_records

    records, report = read_records(path, columns, [columns.question, columns.context])
    labelled = _answer_column(path, records, columns, needs_labels)
    examples, ids = [], {}
    for number, record in records:
        where = f"{path}, row {number}"
        if record.get("id") not in (None, ""):
            ids[number] = str(record["id"])
        question = str(record.get(columns.question) or "").strip()
        context = str(record.get(columns.context) or "")
        if not question or not context.strip():
            report.skipped["empty_text"] += 1
            report.skipped_rows.setdefault("empty_text", []).append(number)
            continue
        if labelled and needs_labels and columns.answer not in record:
            raise ConfigError(
                f'{where} has no {columns.answer!r} while other rows have; give it [] or "" '
                "for an unanswerable question."
            )
        answers, start = _answers(record.get(columns.answer), where) if labelled else ([], None)
        if start is None and answers and record.get(columns.answer_start) not in (None, ""):
            start = _offset(record[columns.answer_start], where, columns.answer_start)
        qid = ids.get(number, f"{path.name}:{number}")
        example, problem = squad.squad_example(qid, question, context, answers, start)
        example.labelled, example.row = labelled, number
        if problem and needs_labels:
            report.skipped[problem] += 1
            report.skipped_rows.setdefault(problem, []).append(number)
        examples.append(example)
    if not examples:
        raise ConfigError(f"{path} holds no usable questions.")
    _refuse_repeated_ids(path, examples, "rows")
    report.read = len(examples)
    return examples, report, ids


def read_questions(path, columns, needs_labels: bool = True):
    """(`SquadExample`s, `ReadReport`) of a SQuAD JSON file or a table of questions.

    `needs_labels` (train and dev): the file must give answers (its answer column, or SQuAD's
    `answers`); else a file without them gives unlabelled examples (`labelled` False), only
    predicted. Question ids must be unique within a file.
    """
    path = Path(path)
    if _is_squad_json(path):
        return _read_squad_file(path, needs_labels)
    examples, report, _ = _table_questions(path, columns, needs_labels)
    return examples, report


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
            self.examples = {**splits, "train": _trainable(task, splits["train"])}
        # Train and dev decide SQuAD 2.0; test never does (nor a file without answers).
        self.version_2 = any(
            not e.answers for name, rows in splits.items() if name != "test"
            for e in rows if e.labelled
        )  # fmt: skip
        self.eval_batch_size = 128
        self._windows = {}

    # -- the user's files ----------------------------------------------------------------------

    @classmethod
    def recognizes(cls, path, columns) -> bool:
        """SQuAD JSON, or a table with the question and context columns and no text column."""
        return _is_squad_json(Path(path)) or _is_question_table(Path(path), columns)

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
            model.max_answer_length, float(model.threshold.numpy()),
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
        if _is_squad_json(path):  # rows are the questions' places; every one has an id
            examples, report = _read_squad_file(path, False)
            ids = {e.row: e.qid for e in examples}
        else:
            examples, report, ids = _table_questions(path, spec, False)
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
                "version_2": model.version_2, "joint_end": model.joint_end}  # fmt: skip

    @classmethod
    def head(cls, module, sequence, shape, padding_mask=None):
        """Start, end (`[W, L]`) and answerability (`[W]`) logits of the encoder's output;
        with the joint head, the end logits `[W, K, L]` of the `[W, K]` `start_candidates`
        (the best starts, padding excluded)."""
        import tensorflow as tf

        model = module._keras.model
        x = tf.reshape(sequence, [shape[0], shape[1], sequence.shape[-1]])  # empty batches too

        def dense(layer, value):
            return tf.nn.bias_add(tf.matmul(value, layer.kernel), layer.bias)

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
        tokens = tf.matmul(x, kernel[:half])[:, None, :, :]  # [W, 1, L, D]
        chosen = tf.matmul(tf.gather(x, starts, batch_dims=1), kernel[half:])[:, :, None, :]
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
