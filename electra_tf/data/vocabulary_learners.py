"""The two WordPiece learners behind `learn_vocabulary`: Hugging Face `tokenizers`' and
tensorflow-text's.

Both see the text our tokenizer sees: `normalize_text` (casing, accents, removed and
space characters) first, then BERT's word splitting (whitespace, punctuation, each CJK
ideograph a word of its own).

- "tokenizers" (the default): `tokenizers`' WordPiece trainer (BPE merges in Rust, on
  all cores), in seconds on 64 MB. The alphabet (the `MAX_CHARACTERS` most frequent
  characters, ties by code point; the others split words as spaces) is given to the trainer up
  front, each character `c` and `##c` in code-point order right after the special
  tokens, as tensorflow-text's learner orders them. That fixes every id the trainer
  breaks ties with (it numbers the `##` pieces in hash-map order otherwise, which
  changes from run to run), so the same text gives the same `vocab.txt` bytes whatever
  the thread count. The merges follow in the order learned.
- "tf-text": tensorflow-text's `bert_vocab_from_dataset`, a pure-Python learner that
  binary-searches a count threshold (minutes on a few MB); kept for its exact output.

`vocabulary_size` is the target size, special tokens and alphabet included; a learner
may return fewer (no more merges to make), or more when the alphabet alone is larger.
"""

from __future__ import annotations

import collections
import itertools

__all__ = [
    "MAX_CHARACTERS",
    "learn_with_tf_text",
    "learn_with_tokenizers",
    "normalized_batches",
    "train_wordpiece",
]

#: The most distinct characters a learned vocabulary holds (tensorflow-text's default).
MAX_CHARACTERS = 1000
_BATCH = 4096


def normalized_batches(texts, lower_case: bool, strip_accents: bool):
    """Lists of normalized strings (`normalize_text`), from strings or a `tf.data.Dataset`."""
    import tensorflow as tf

    from electra_tf.data.normalization import normalize_text

    if isinstance(texts, tf.data.Dataset):
        batches = (b for b in texts.batch(_BATCH).as_numpy_iterator())
    else:
        iterator = iter(texts)
        batches = iter(lambda: list(itertools.islice(iterator, _BATCH)), [])
    for batch in batches:
        normalized = normalize_text(tf.constant(batch, tf.string), lower_case, strip_accents)
        yield [text.decode("utf-8") for text in normalized.numpy().tolist()]


def _alphabet(batches: list) -> tuple[list[str], set[str]]:
    """The characters of the words, sorted: at most `MAX_CHARACTERS`, the most frequent
    (ties by code point); and the characters left out."""
    seen = set()
    for batch in batches:
        for text in batch:
            seen.update(text)
    characters = sorted(c for c in seen if not c.isspace())
    if len(characters) <= MAX_CHARACTERS:
        return characters, set()
    counts = collections.Counter()
    for batch in batches:
        for text in batch:
            counts.update(text)
    ranked = sorted(characters, key=lambda c: (-counts[c], c))
    return sorted(ranked[:MAX_CHARACTERS]), set(ranked[MAX_CHARACTERS:])


def train_wordpiece(batches: list, vocabulary_size: int, special_tokens) -> list[str]:
    """`tokenizers`' WordPiece trainer on normalized text (lists of strings); the tokens.

    The special tokens first, then each character and its `##` form (module docstring),
    then the pieces merged, in the order learned.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    alphabet, left_out = _alphabet(batches)
    if not alphabet:
        return list(special_tokens)
    if left_out:  # rare characters past MAX_CHARACTERS: they split words, as spaces
        table = {ord(c): " " for c in left_out}
        batches = [[text.translate(table) for text in batch] for batch in batches]
    fixed = [*special_tokens, *alphabet, *(f"##{c}" for c in alphabet)]
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(  # text is normalized: CJK split only
        clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocabulary_size,
        special_tokens=fixed,
        show_progress=False,
        continuing_subword_prefix="##",
    )
    tokenizer.train_from_iterator(iter(batches), trainer)
    ids = tokenizer.get_vocab()
    return sorted(ids, key=ids.get)


def learn_with_tokenizers(texts, vocabulary_size, lower_case, strip_accents, special_tokens):
    """`train_wordpiece` on the normalized texts."""
    batches = list(normalized_batches(texts, lower_case, strip_accents))
    return train_wordpiece(batches, vocabulary_size, special_tokens)


def learn_with_tf_text(texts, vocabulary_size, lower_case, strip_accents, special_tokens):
    """tensorflow-text's `bert_vocab_from_dataset` on the normalized texts."""
    import tensorflow as tf
    from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset as learner

    from electra_tf.data.normalization import normalize_text

    if isinstance(texts, tf.data.Dataset):
        dataset = texts
    else:
        dataset = tf.data.Dataset.from_generator(
            lambda: iter(texts), output_signature=tf.TensorSpec([], tf.string)
        )
    dataset = dataset.batch(1024).map(
        lambda batch: normalize_text(batch, lower_case=lower_case, strip_accents=strip_accents)
    )
    vocabulary = learner.bert_vocab_from_dataset(
        dataset,
        vocab_size=vocabulary_size,
        reserved_tokens=list(special_tokens),
        bert_tokenizer_params={"lower_case": False},
        learn_params={},
    )
    return list(vocabulary)
