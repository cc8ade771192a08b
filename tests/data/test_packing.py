"""Example packing against answers worked out by hand, with the random draws scripted."""

import pytest

from electra_tf.data.packing import ExampleBuilder

CLS, SEP = 2, 3


class Scripted:
    """Stands in for random.Random: returns the given draws in order, and records them."""

    def __init__(self, randoms, randints=()):
        self.randoms, self.randints = list(randoms), list(randints)

    def random(self):
        return self.randoms.pop(0)

    def randint(self, low, high):
        value = self.randints.pop(0)
        assert low <= value <= high
        return value


def _builder(max_length, randoms, randints=()):
    builder = ExampleBuilder(max_length, CLS, SEP, seed=0)
    builder.random = Scripted(randoms, randints)
    return builder


def test_two_segments_split_at_half_the_target():
    # max 12: A's target is (12 - 3) // 2 = 4. Draws in order: single segment? 0.5 (no);
    # the half chance for [12 13 14]: 0.7 (no); next target short? 0.9 (no).
    b = _builder(12, [0.5, 0.7, 0.9])
    assert b.add_sentence([10, 11]) is None
    assert b.add_sentence([12, 13, 14]) is None
    assert b.add_sentence([15, 16]) is None
    example = b.add_sentence([17, 18, 19, 20, 21])  # 12 tokens >= 12: pack
    ids, mask, segments = example
    # [10 11] -> A (A empty). [12 13 14]: 2+3 < 4 no; B empty and 2 < 4 and draw 0.7 < 0.5 no -> B.
    # [15 16] and [17..21] -> B. A = [10 11] (<= 10), B truncated to 12 - 2 - 3 = 7 tokens.
    assert ids == [CLS, 10, 11, SEP, 12, 13, 14, 15, 16, 17, 18, SEP]
    assert mask == [1] * 12
    assert segments == [0, 0, 0, 0] + [1] * 8
    assert b.target_length == 12 and not b.random.randoms


def test_half_chance_sends_an_overflowing_sentence_to_a():
    b = _builder(12, [0.5, 0.2, 0.9])
    b.add_sentence([10, 11])
    b.add_sentence([12, 13, 14])
    ids, _, segments = b.add_sentence([15] * 7)
    # [12 13 14] goes to A on the 0.2 < 0.5 draw; then [15]*7: 5 + 7 < 4 no, B empty but A (5)
    # is not under 4: -> B. A = 5 tokens, B truncated to 12 - 5 - 3 = 4.
    assert ids == [CLS, 10, 11, 12, 13, 14, SEP, 15, 15, 15, 15, SEP]
    assert segments == [0] * 7 + [1] * 5


def test_single_segment_and_truncation_to_max_minus_two():
    b = _builder(8, [0.05, 0.9])  # 0.05 < 0.1: one segment (A's target 100000)
    ids, mask, segments = b.add_sentence(list(range(20, 30)))
    assert ids == [CLS, 20, 21, 22, 23, 24, 25, SEP]  # A truncated to 8 - 2 = 6, no B
    assert segments == [0] * 8 and mask == [1] * 8


def test_short_target_then_padding_and_document_end():
    b = _builder(10, [0.5, 0.01, 0.5, 0.9], randints=[6])
    first = b.add_sentence(list(range(20, 31)))  # 11 >= 10
    assert first[0] == [CLS, 20, 21, 22, 23, 24, 25, 26, 27, SEP]
    assert b.target_length == 6  # 0.01 < 0.05: next target drawn from [5, 10] -> 6
    assert b.add_sentence([40, 41]) is None
    ids, mask, segments = b.end_document()  # a short document: padded to 10
    assert ids == [CLS, 40, 41, SEP, 0, 0, 0, 0, 0, 0]
    assert mask == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert segments == [0] * 10
    assert b.end_document() is None  # nothing pending
    assert b.add_sentence([]) is None  # empty sentences change nothing


def test_seeded_builders_are_deterministic_and_seed_sensitive():
    sentences = [[i] * (1 + i % 7) for i in range(10, 200)]

    def run(seed):
        b = ExampleBuilder(16, CLS, SEP, seed=seed)
        out = [b.add_sentence(s) for s in sentences] + [b.end_document()]
        return [e for e in out if e is not None]

    assert run(1) == run(1)
    assert run(1) != run(2)
    for ids, mask, segments in run(1):
        assert len(ids) == len(mask) == len(segments) == 16
        assert ids[0] == CLS and ids[sum(mask) - 1] == SEP


@pytest.mark.parametrize("max_length", [5, 9, 128])
def test_every_example_fits(max_length):
    b = ExampleBuilder(max_length, CLS, SEP, seed=3)
    examples = [b.add_sentence([7] * n) for n in (1, 50, 3, 200, 2, 2, 2, 90)] + [b.end_document()]
    for example in filter(None, examples):
        assert len(example[0]) == max_length and example[0].count(SEP) in (1, 2)


def test_examples_serialize_as_protobuf_does_deterministically():
    import numpy as np
    import tensorflow as tf

    from electra_tf.data.shards import serialize_examples
    from electra_tf.data.tfrecords import serialize_example

    def protobuf(*columns):
        features = {
            name: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))
            for name, values in zip(("input_ids", "input_mask", "segment_ids"), columns)
        }
        example = tf.train.Example(features=tf.train.Features(feature=features))
        return example.SerializeToString(deterministic=True)

    rng = np.random.default_rng(0)
    for top, length in ((2, 8), (128, 5), (30_522, 128), (2**21 + 5, 64), (2**40, 3)):
        ids = rng.integers(0, top, size=(20, length))
        mask = (rng.random((20, length)) < 0.8).astype(np.int64)
        segments = rng.integers(0, 2, size=(20, length))
        records = serialize_examples(ids, mask, segments)
        assert records == [protobuf(*row) for row in zip(ids, mask, segments)], top
        assert records == [serialize_example(*row) for row in zip(ids, mask, segments)]
    assert serialize_examples(np.zeros((0, 4)), np.zeros((0, 4)), np.zeros((0, 4))) == []


def test_verdicts_do_not_depend_on_the_order_digests_come_in():
    import random

    from electra_tf.data.workers import Ledger

    rng = random.Random(5)
    chunks = [[bytes([rng.randrange(12)]) for _ in range(rng.randrange(0, 6))] for _ in range(30)]
    for deduplicate, most in ((True, None), (True, 40), (False, 17)):
        in_order = Ledger(deduplicate, most)
        expected = [v for i, digests in enumerate(chunks) for v in in_order.offer(i, digests)]
        shuffled, decided = Ledger(deduplicate, most), []
        for i in rng.sample(range(len(chunks)), len(chunks)):
            decided += shuffled.offer(i, chunks[i])
        assert decided == expected and shuffled.last_index == in_order.last_index
        counted = sum(v.counted for _, v in expected)
        assert counted == min(sum(map(len, chunks)), most or 10**9)
        kept = [d for i, v in expected for n, d in enumerate(chunks[i][: v.counted])
                if n not in v.dropped]  # fmt: skip
        if deduplicate:  # the first of each digest, in reading order
            first = list(dict.fromkeys(d for c in chunks for d in c))
            assert kept == [d for d in first if d in set(sum(chunks, [])[:counted])]


def test_rows_of_segments_equal_the_builder_s_padded_examples():
    import random

    import numpy as np

    from electra_tf.data.chunk_work import SegmentBuilder, example_rows

    rng = random.Random(2)
    sentences = [[rng.randrange(5, 99) for _ in range(rng.randrange(1, 40))] for _ in range(900)]
    padded, segmented = ExampleBuilder(48, CLS, SEP, seed=4), SegmentBuilder(48, CLS, SEP, seed=4)
    expected, pairs = [], []
    for number, sentence in enumerate(sentences):
        expected.append(padded.add_sentence(sentence))
        pairs.append(segmented.add_sentence(sentence))
        if number % 7 == 6:  # a document ends
            expected.append(padded.end_document())
            pairs.append(segmented.end_document())
    expected = [e for e in expected if e is not None]
    rows = example_rows([p for p in pairs if p is not None], 48, CLS, SEP)
    assert len(expected) > 100
    for k, matrix in enumerate(rows):
        np.testing.assert_array_equal(matrix, np.array([e[k] for e in expected]))
