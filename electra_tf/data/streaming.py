"""Straight from text to training batches, without a prepare step.

`text_dataset` runs the corpus readers, the graph tokenizer and the reference
packer inside a `tf.data` generator, so `pretrain --text` can train on raw
files at once. Prepared TFRecords remain the faster and exactly resumable
choice: a streamed run resumes by skipping the examples already used.
"""

from __future__ import annotations

import tensorflow as tf

from electra_tf.data.corpus import CorpusStats, read_documents
from electra_tf.data.packing import ExampleBuilder

__all__ = ["packed_examples", "text_dataset"]


def packed_examples(
    sources, tokenizer, sequence_length: int, seed: int, stats=None, batch_sentences: int = 1024
):
    """Yields packed examples `(input_ids, input_mask, segment_ids)` from corpus sources."""
    stats = stats or CorpusStats()
    builder = ExampleBuilder(
        sequence_length, tokenizer.cls_id, tokenizer.sep_id, seed=seed, pad_id=tokenizer.pad_id
    )
    # Without AutoGraph, as `chunk_work`'s: converting tensorflow-text's code took ~1 CPU-s.
    signature = [tf.TensorSpec([None], tf.string)]
    tokenize = tf.function(tokenizer.tokenize, input_signature=signature, autograph=False)
    pending = []

    def drain(documents):
        sentences = [s for d in documents for s in d]
        ids = tokenize(tf.constant(sentences)).to_list() if sentences else []
        position = 0
        for document in documents:
            for sentence_ids in ids[position : position + len(document)]:
                example = builder.add_sentence(sentence_ids)
                if example is not None:
                    yield example
            position += len(document)
            example = builder.end_document()
            if example is not None:
                yield example

    count = 0
    for document in read_documents(sources, stats):
        pending.append(document)
        count += len(document)
        if count >= batch_sentences:
            yield from drain(pending)
            pending, count = [], 0
    yield from drain(pending)


def text_dataset(
    sources,
    tokenizer,
    *,
    sequence_length: int,
    batch_size: int,
    seed: int,
    start_step: int = 0,
    repeat: bool = True,
) -> tf.data.Dataset:
    """Batches of packed examples made on the fly from text.

    Args:
        sources: corpus sources (see `electra_tf.data.corpus`).
        tokenizer: an `ElectraTokenizer`.
        sequence_length, batch_size, seed: as for prepared data.
        start_step: skip `start_step * batch_size` examples (resume).
        repeat: loop over the corpus forever (each pass packs identically).

    Returns:
        `tf.data.Dataset` of dicts of int32 `[batch_size, sequence_length]`.
    """
    spec = tf.TensorSpec([sequence_length], tf.int32)
    dataset = tf.data.Dataset.from_generator(
        lambda: packed_examples(sources, tokenizer, sequence_length, seed),
        output_signature=(spec, spec, spec),
    )
    if repeat:
        dataset = dataset.repeat()
    dataset = dataset.skip(start_step * batch_size).batch(batch_size, drop_remainder=True)
    dataset = dataset.map(
        lambda ids, mask, segments: {
            "token_ids": ids,
            "padding_mask": mask,
            "segment_ids": segments,
        }
    )
    return dataset.prefetch(tf.data.AUTOTUNE)
