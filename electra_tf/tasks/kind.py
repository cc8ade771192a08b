"""`Kind`: what one kind of fine-tuning task defines (the base of every registered kind).

A kind instance is bound to one task and its splits, and is what the engine
(`electra_tf.finetuning.engine`) trains: `build`, `compile_arguments`, `rows`,
`fit`, `score`, `splits`, `predictions`, `main_metric` and `selection`. Its
class methods serve the rest of the package without data: reading the user's
files (`read`, `claims`, `label_names`, `check_labels`, `prepare`), the Keras
model's loss, metrics, targets and decoding (`loss`, `keras_metrics`,
`encode_targets`, `decode`), prediction from the CLI (`inputs_from_texts`,
`read_inputs`, `predict`) and the SavedModel (`serving_inputs`, `serve`,
`decode_serving`).

`infer_kind` picks the kind of the user's training labels: the registered
kinds are asked in `priority` order whether they claim the labels.
"""

from __future__ import annotations

from typing import NamedTuple

from electra_tf.config import ConfigError
from electra_tf.tasks.registry import get_kind, kind_names

__all__ = [
    "Kind",
    "Inputs",
    "infer_kind",
    "label_order",
    "no_answer_collapse",
    "row_of",
    "weights_digest",
]

#: Sets of outputs per split that `Kind.remembered` keeps (one per epoch of a usual run).
REMEMBERED = 12


def weights_digest(model) -> bytes:
    """A BLAKE2b digest of the weights `model`'s forward pass reads (values and shapes, in
    order): all of `model.weights` but those it lists in `decision_weights` (read after the
    forward pass: question answering's answer threshold)."""
    import hashlib

    import numpy as np

    after = {id(weight) for weight in getattr(model, "decision_weights", ())}
    digest = hashlib.blake2b(digest_size=16)
    for weight in (w for w in model.weights if id(w) not in after):
        value = np.ascontiguousarray(weight.numpy())
        digest.update(repr((value.dtype.str, value.shape)).encode())
        digest.update(value.data)
    return digest.digest()


class Inputs(NamedTuple):
    """A file's inputs to predict: `texts` (or word lists), `pairs` (or None), each input's
    `rows` (its row number in the file, or its id), `skipped`: {row: why it could not
    be predicted} for the rows left out, and `ids`: {row: its id} where the file gives ids
    (question answering), else None."""

    texts: list
    pairs: list | None
    rows: list
    skipped: dict
    ids: dict | None = None


def row_of(guid: str):
    """The row number in a guid "file.csv:12" (else the guid itself).

    >>> row_of("train.csv:12"), row_of("q-7")
    (12, 'q-7')
    """
    tail = str(guid).rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else str(guid)


def skipped_rows(report) -> dict:
    """{row: reason} of a `ReadReport`'s skipped rows."""
    return {row: reason for reason, rows in report.skipped_rows.items() for row in rows}


def label_order(names) -> list[str]:
    """Label names sorted, numerically when every name is an integer.

    >>> label_order(["pos", "neg", "pos"]), label_order(["10", "9", "-1"])
    (['neg', 'pos'], ['-1', '9', '10'])
    """
    names = sorted(set(names))
    if all(name.lstrip("-").isdigit() for name in names):
        return sorted(names, key=int)
    return names


class Kind:
    """The base of the registered kinds (see the module docstring)."""

    name: str = ""
    #: The metrics of a task of this kind read from files; the first chooses on dev.
    metrics: tuple = ()
    #: Offered by `finetune --kind` for the user's own files.
    from_files: bool = True
    #: Whether `electra-tf export` writes a SavedModel of it.
    servable: bool = True
    #: Whether `electra-tf export --format litert` writes a LiteRT flatbuffer of it.
    litert: bool = False
    #: Order in which `infer_kind` asks kinds to claim labels (lower first; None: never).
    priority: int | None = None
    #: Whether its labels are names (False: numbers, as regression's scores).
    named_labels: bool = True
    #: Whether its exported head reads each sequence's first position alone: the exports
    #: then compute only that position in the last block, and `head` gets it, `[B, H]`.
    first_position_head: bool = False
    #: The dev metric that chooses the kept epoch where the task reports it (None, or a
    #: metric the task lacks: the task's first metric).
    selection_metric: str | None = None

    def __init__(self, task, splits: dict):
        self.task = task
        self.examples = splits
        chosen = self.selection_metric
        self.main_metric = chosen if chosen in task.metrics else task.metrics[0]
        self.selection = "dev"

    # -- the user's files -------------------------------------------------------------------

    @classmethod
    def recognizes(cls, path, columns) -> bool:
        """Whether the file is of a format only this kind reads (CoNLL: tagging)."""
        from electra_tf.datasets.files import table_format

        return table_format(path, columns.format) in getattr(cls, "formats", ())

    @classmethod
    def task_columns(cls, columns) -> tuple:
        """The task's (text, text pair, label) columns (a pair task has a second text)."""
        return (columns.text, columns.text_pair, columns.label)

    @classmethod
    def read(cls, path, columns, needs_labels: bool):
        """(rows, `ReadReport`) of one file."""
        from electra_tf.datasets.files import read_table

        return read_table(path, columns, needs_labels=needs_labels)

    @classmethod
    def claims(cls, labels: list) -> bool:
        """Whether training labels `labels` are of this kind (for `infer_kind`)."""
        return False

    @classmethod
    def label_names(cls, rows: list, given=None) -> tuple[list, str]:
        """(label names in class-id order, how the order was decided)."""
        names = [str(x) for e in rows for x in _values(e.label)]
        found = label_order(names)
        if not given:
            return found, "labels sorted"
        order = [str(label) for label in given]
        extra = [name for name in found if name not in order]
        if extra:
            raise ConfigError(
                f"The training labels include {extra[0]!r}, which --labels does not list."
            )
        return order, "label order given"

    @classmethod
    def check_labels(cls, split: str, rows: list, labels: list) -> None:
        """Refuses a dev or test label that training never had, in one sentence."""
        known = set(labels)
        for example in rows:
            for value in _values(example.label):
                if value is not None and str(value) not in known:
                    raise ConfigError(
                        f"{example.guid} ({split}): label {value!r} never occurs in training "
                        f"(labels: {', '.join(labels)}); fix the row or add examples of it to "
                        "train."
                    )

    @classmethod
    def prepare(cls, rows: list) -> list:
        """The rows with labels as the model reads them (names as strings, here)."""
        import dataclasses

        def name(label):
            if label is None:
                return None
            if isinstance(label, list | tuple):
                return [str(v) for v in label]
            return str(label)

        return [dataclasses.replace(e, label=name(e.label)) for e in rows]

    @classmethod
    def check_config(cls, config) -> None:
        """Refuses fine-tuning settings this kind cannot train with, in one sentence, before
        the run folder is made (none here)."""
        return None

    # -- the engine's job ------------------------------------------------------------------

    def build(self, init, config):
        raise NotImplementedError

    def compile_arguments(self, model) -> dict:
        return {"loss": model.default_loss()}

    def rows(self) -> int:
        return len(self.examples["train"])

    def fit_rows(self, model, x, y, config, seed: int, initial_epoch: int, callbacks) -> None:
        """The Keras task model's `fit` on training inputs `x` and targets `y` with the run's
        batch size, epochs, seed and length grouping (the engine's callbacks score dev)."""
        model.fit(
            x,
            y,
            batch_size=config.batch_size,
            epochs=config.epochs,
            initial_epoch=initial_epoch,
            seed=seed,
            group_by_length=config.group_by_length,
            callbacks=callbacks,
            verbose=0,
        )

    def remembered(self, model, split: str, compute):
        """`compute()`, the model's outputs on `split`, computed once per set of weights.

        The engine scores dev after every epoch and the kept model predicts dev (and test,
        scored first) with the best epoch's weights: with this, that model's outputs come
        from its own scoring pass instead of another one. Outputs are keyed by a digest of
        every weight (BLAKE2b over their bytes), so other weights never reuse them; the
        last `REMEMBERED` sets of outputs per split are kept.
        """
        key = weights_digest(model)
        memory = self.__dict__.setdefault("_remembered", {}).setdefault(split, {})
        if key not in memory:
            memory[key] = compute()
            while len(memory) > REMEMBERED:
                memory.pop(next(iter(memory)))
        return memory[key]

    def collapse(self, split: str) -> str | None:
        """What the last `score` of `split` found its predictions collapsed to, as a phrase
        ("every dev prediction is 'neg' while only 80% of dev rows are 'neg'"), or None when
        they are not all one value, the labels are all one value too, or the kind does not
        tell (regression). Read from the predictions that scoring made: no other pass."""
        return self.__dict__.get("_collapse", {}).get(split)

    def note_collapse(self, split: str, phrase: str | None) -> None:
        """Records what `collapse(split)` returns until `split` is scored again."""
        self.__dict__.setdefault("_collapse", {})[split] = phrase

    def cut_rows(self, model, split: str) -> int:
        """How many rows of `split` are longer than the model reads (0 where nothing is cut:
        tagging counts `words_cut` in its scores, question answering reads windows)."""
        return 0

    @classmethod
    def cut_inputs(cls, preprocessor, texts, pairs=None) -> int | None:
        """How many of `texts` (with `pairs`) are longer than `preprocessor` reads; None
        where this kind cuts nothing whole (tagging says `words_cut` per row)."""
        return None

    def splits(self) -> list[str]:
        """The evaluation splits that have labels to score."""
        return [
            name
            for name, rows in self.examples.items()
            if name != "train" and rows and all(e.label is not None for e in rows)
        ]

    # -- prediction from the CLI ---------------------------------------------------------------

    @classmethod
    def inputs_from_texts(cls, texts: list) -> list:
        """The model's inputs of texts given on the command line."""
        return list(texts)

    @classmethod
    def read_inputs(cls, path, columns, format: str | None = None) -> Inputs:
        """The `Inputs` of a file to predict, read with `columns` (a dict)."""
        from electra_tf.datasets.files import Columns, read_table, table_format

        kind = table_format(path, format or columns.get("format"))
        if kind == "conll":
            raise ConfigError(f"{path} is a CoNLL file; a {cls.name} model reads tables.")
        known = {k: v for k, v in columns.items() if v is not None and k in Columns.__annotations__}
        spec = Columns(**{**known, "format": kind})
        examples, report = read_table(path, spec, needs_labels=False)
        texts = [e.text_a for e in examples]
        pairs = [e.text_b for e in examples] if spec.text_pair else None
        return Inputs(texts, pairs, [row_of(e.guid) for e in examples], skipped_rows(report))

    # -- the SavedModel ------------------------------------------------------------------------

    @classmethod
    def shown_inputs(cls, text, pair) -> dict:
        """How a prediction row shows its input (a tagging input is a word list)."""
        shown = {"text": " ".join(text) if isinstance(text, list) else text}
        if pair is not None:
            shown["text_pair"] = pair
        return shown

    @classmethod
    def head_weights(cls, model) -> list:
        """The task head's variables, kept by the SavedModel beside the encoder's."""
        return list(model.output_dense.weights)

    @classmethod
    def serving_settings(cls, model) -> dict:
        """Settings the SavedModel's graph needs besides the weights (none here)."""
        return {}

    @classmethod
    def serving_text(cls, inputs) -> list:
        """The SavedModel's `text` input of what `predict` takes."""
        return list(inputs)

    @classmethod
    def serving_inputs(cls, pair: bool) -> list:
        import tensorflow as tf

        specs = [tf.TensorSpec([None], tf.string, name="text")]
        if pair:
            specs.append(tf.TensorSpec([None], tf.string, name="text_pair"))
        return specs


def no_answer_collapse(split: str, answers: dict, references: dict) -> str | None:
    """The collapse phrase of question answering: every predicted answer in `answers`
    ({qid: text}) is empty while some `references` ({qid: [gold answers]}) are not."""
    if any(answers.values()) or not answers:
        return None
    answerable = sum(1 for gold in references.values() if any(gold))
    if not answerable:
        return None
    share = answerable / len(references)
    return (
        f"every {split} answer is empty (no answer) while {share:.0%} of {split} questions have one"
    )


def _values(label) -> list:
    return list(label) if isinstance(label, list | tuple) else [label]


def infer_kind(train: list, kind: str | None = None) -> tuple[str, str]:
    """(the kind's name, how it was decided) for training rows of the user's files.

    With `kind` given it is checked; else the registered kinds are asked in `priority`
    order whether they claim the labels (lists: multi-label; numbers with a fraction
    among them: regression; anything else: classification).
    """
    if kind is not None:
        if kind not in kind_names(from_files=True):
            choices = ", ".join(kind_names(from_files=True))
            raise ConfigError(f"Unknown kind {kind!r}: choose one of {choices}.")
        return kind, "given"
    labels = [e.label for e in train]
    candidates = [get_kind(n) for n in kind_names(from_files=True)]
    for candidate in sorted(
        (k for k in candidates if k.priority is not None), key=lambda k: k.priority
    ):
        if candidate.claims(labels):
            return candidate.name, f"inferred: {candidate.claim_reason}"
    raise ConfigError("No kind reads these labels; pass --kind.")
