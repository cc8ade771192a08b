"""TF Serving's warm-up requests for a fine-tuned run's SavedModel
(`assets.extra/tf_serving_warmup_requests`, which the model server replays when it loads a
version, before it answers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from electra_tf.serving.saved_model_assets import prediction_log

__all__ = ["MAX_RECORDS", "warmup_words", "write_warmup"]


def write_warmup(path: Path, module, model_name: str, id_names) -> None:
    """TF Serving's warm-up requests for a `TaskServingModule`: the text signature at batch 1
    once for every length a text can pack to, at batch 8, and `serve` (inputs `id_names`).

    oneDNN prepares a product's kernels for each new shape on its first call, so a server's
    first calls at each length are slower: on 200 review texts in one process the batch-1 p99
    was 8.4 ms in the first pass and 4.7 after; warmed by one text of each length first, 5.4
    in the first pass (docs/results/serving.md).
    """
    word = _one_token_word(module.tokenizer)
    lengths = [[" ".join([word] * n)] for n in warmup_words(module.seq_length)]
    batches = [["The service was quick and friendly."] * 8]
    path.parent.mkdir(parents=True, exist_ok=True)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for texts in lengths + batches:  # a pair's second text: one word
            inputs = {
                name: texts if i == 0 else [word] * len(texts)
                for i, name in enumerate(module.text_names)
            }
            writer.write(prediction_log(model_name, "serving_default", inputs))
        ids = np.full((1, 8), module.tokenizer.unk_id, np.int32)
        ids[0, 0], ids[0, -1] = module.tokenizer.cls_id, module.tokenizer.sep_id
        values = (ids, np.ones_like(ids), np.zeros_like(ids))
        writer.write(prediction_log(model_name, "serve", dict(zip(id_names, values, strict=True))))


#: TF Serving refuses a version whose warm-up file holds more than 1,000 records.
MAX_RECORDS = 1000


def warmup_words(seq_length: int, most: int = MAX_RECORDS - 2) -> list[int]:
    """The words of the single-text warm-up requests: 1 to `seq_length - 2` (one text packing
    to each length, with [CLS] and [SEP]), or `most` of them evenly spread when there are
    more (the batch of 8 and `serve` take the other two records).

    >>> warmup_words(6), len(warmup_words(4096)), warmup_words(4096)[-1]
    ([1, 2, 3, 4], 998, 4094)
    """
    top = max(1, seq_length - 2)
    if top <= most:
        return list(range(1, top + 1))
    return sorted({round(1 + i * (top - 1) / (most - 1)) for i in range(most)})


def _one_token_word(tokenizer) -> str:
    """A vocabulary entry that is a whole lowercase ASCII word (one token as written), else
    "the"."""
    words = (t for t in tokenizer.vocabulary if t.isascii() and t.isalpha() and t.islower())
    return next(words, "the")
