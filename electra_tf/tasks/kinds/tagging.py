"""Per-word tagging (named entities, chunks): CoNLL files, a tag per word, entity F1.

A word's tag is learned and predicted at its first WordPiece. Words past the
maximum length get no prediction: the Keras model and the SavedModel give
them tag "" with probability 0, each prediction row counts them
(`words_cut`), and scoring counts them as "O" (a missed entity there is a
miss) and reports how many were cut (`words_cut`, summed over the split).
Scores are entity-level precision, recall and F1 as conlleval and seqeval
compute them (`electra_tf.metrics.entity_scores`), plus word accuracy.
"""

from __future__ import annotations

from electra_tf.config import ConfigError
from electra_tf.metrics import entity_scores
from electra_tf.tasks.kind import Inputs, Kind, row_of, skipped_rows
from electra_tf.tasks.kinds._text import encoder_and_preprocessor
from electra_tf.tasks.registry import register_kind
from electra_tf.tasks.token_classifier import ElectraTokenClassifier
from electra_tf.tasks.token_classifier_preprocessor import ElectraTokenClassifierPreprocessor

__all__ = ["Tagging"]


@register_kind
class Tagging(Kind):
    """Tags per word with `ElectraTokenClassifier` (see the module docstring).

    >>> Tagging.inputs_from_texts(["Ada lives in Rome"])
    [['Ada', 'lives', 'in', 'Rome']]
    """

    name = "tagging"
    metrics = ("f1", "precision", "recall", "accuracy")
    formats = ("conll",)

    def __init__(self, task, splits: dict):
        super().__init__(task, splits)
        self.eval_batch_size = 128

    @classmethod
    def read(cls, path, columns, needs_labels: bool):
        from electra_tf.datasets.conll import read_conll

        return read_conll(path, needs_labels=needs_labels)

    def build(self, init, config) -> ElectraTokenClassifier:
        self.eval_batch_size = config.eval_batch_size
        encoder, preprocessor = encoder_and_preprocessor(
            init, config, ElectraTokenClassifierPreprocessor
        )
        model = ElectraTokenClassifier(
            encoder, list(self.task.labels), preprocessor, config.dropout
        )
        model.build()
        return model

    def fit(self, model, config, seed: int, initial_epoch: int, callbacks) -> None:
        train = self.examples["train"]
        words, tags = [list(s.words) for s in train], [list(s.label) for s in train]
        self.fit_rows(model, words, tags, config, seed, initial_epoch, callbacks)

    def _rows(self, model, split: str) -> list[dict]:
        words = [list(s.words) for s in self.examples[split]]
        rows = self.remembered(
            model, split, lambda: model.predict_labels(words, batch_size=self.eval_batch_size)
        )
        return [dict(row) for row in rows]  # `predictions` adds to them

    def score(self, model, split: str) -> dict:
        rows = self._rows(model, split)
        gold = [list(s.label) for s in self.examples[split]]
        predicted = [[tag or "O" for tag in row["tags"]] for row in rows]
        self.note_collapse(split, _tag_collapse(split, gold, predicted))
        scores = entity_scores(gold, predicted)
        scores["words_cut"] = float(sum(row["words_cut"] for row in rows))
        return scores

    def predictions(self, model, split: str) -> list[dict]:
        rows = self._rows(model, split)
        for row, sentence in zip(rows, self.examples[split], strict=True):
            if sentence.label is not None:
                row["gold"] = list(sentence.label)
        return rows

    # -- prediction --------------------------------------------------------------------------

    @classmethod
    def inputs_from_texts(cls, texts: list) -> list:
        return [text.split() if isinstance(text, str) else list(text) for text in texts]

    @classmethod
    def read_inputs(cls, path, columns, format: str | None = None):
        from electra_tf.datasets.conll import read_conll
        from electra_tf.datasets.files import table_format

        if table_format(path, format or columns.get("format")) == "conll":
            sentences, report = read_conll(path, needs_labels=False)
            words = [list(s.words) for s in sentences]
            rows = [row_of(s.guid) for s in sentences]
            return Inputs(words, None, rows, skipped_rows(report))
        read = super().read_inputs(path, columns, format)
        return read._replace(texts=cls.inputs_from_texts(read.texts), pairs=None)

    @classmethod
    def predict(cls, model, texts, pairs=None, batch_size: int = 32) -> list[dict]:
        return model.predict_labels(cls.inputs_from_texts(texts), batch_size=batch_size)

    @classmethod
    def serving_text(cls, inputs) -> list[str]:
        """The SavedModel's `text` of word lists (it splits text on whitespace)."""
        return [" ".join(words) for words in cls.inputs_from_texts(inputs)]

    # -- the SavedModel ----------------------------------------------------------------------

    @classmethod
    def serving_inputs(cls, pair: bool) -> list:
        if pair:
            raise ConfigError("A tagging model reads one text per example, not pairs.")
        return Kind.serving_inputs(False)

    @classmethod
    def head(cls, module, sequence, shape, padding_mask=None):
        import tensorflow as tf

        logits = tf.nn.bias_add(tf.matmul(sequence, module.head_kernel), module.head_bias)
        return tf.reshape(logits, [shape[0], shape[1], logits.shape[-1]])  # empty batches too

    @classmethod
    def serve(cls, module, text, text_pair=None) -> dict:
        """`words`, `tags` ("" past the maximum length and in padding), `tag_ids` (-1 there),
        `probabilities` `[B, W, tags]` (0 there) and `words_cut` `[B]`."""
        import tensorflow as tf

        from electra_tf.tasks.token_classifier_preprocessor import pack_words

        words = tf.strings.split(text)  # [B, (W)]
        packed = pack_words(module.tokenizer, words, module.seq_length)
        logits = module.logits(packed["token_ids"], packed["padding_mask"], packed["segment_ids"])
        keep = packed["word_mask"]
        word_logits = tf.gather(logits, packed["word_positions"], batch_dims=1)  # [B, W, C]
        kept = keep[..., None] > 0
        probabilities = tf.where(kept, tf.nn.softmax(word_logits), 0.0)
        tag_ids = tf.where(keep > 0, tf.argmax(word_logits, -1, output_type=tf.int32), -1)
        tags = tf.where(tag_ids >= 0, tf.gather(module.labels, tf.maximum(tag_ids, 0)), "")
        counts = tf.cast(words.row_lengths(), tf.int32)
        return {
            "words": words.to_tensor(""),
            "tags": tags,
            "tag_ids": tag_ids,
            "probabilities": probabilities,
            "words_cut": counts - tf.reduce_sum(keep, axis=1),
        }

    @classmethod
    def decode_serving(cls, outputs: dict, labels) -> list[dict]:
        rows = []
        for i, words in enumerate(outputs["words"]):
            count = sum(1 for w in words if w)
            ids = outputs["tag_ids"][i][:count]
            rows.append(
                {
                    "words": [w.decode() for w in words[:count]],
                    "tags": [t.decode() for t in outputs["tags"][i][:count]],
                    "probabilities": [
                        float(outputs["probabilities"][i][j][t]) if t >= 0 else 0.0
                        for j, t in enumerate(ids)
                    ],
                    "words_cut": int(outputs["words_cut"][i]),
                }
            )
        return rows


def _tag_collapse(split: str, gold: list, predicted: list) -> str | None:
    """Every predicted tag the same while the gold tags hold at least two.

    >>> _tag_collapse("dev", [["B-PER", "O", "O", "O"]], [["O", "O", "O", "O"]])
    "every dev word is predicted 'O' while 25% of dev words are tagged"
    """
    chosen = {tag for row in predicted for tag in row}
    tags = [tag for row in gold for tag in row]
    if len(chosen) != 1 or len(set(tags)) < 2:
        return None
    (tag,) = chosen
    share = sum(1 for t in tags if t != tag) / len(tags)
    if tag == "O":
        return f"every {split} word is predicted 'O' while {share:.0%} of {split} words are tagged"
    return f"every {split} word is predicted {tag!r} while {share:.0%} of {split} words are not"
