"""Example packing exactly as the reference `build_pretraining_dataset.py` does it.

Sentences (lists of token ids) accumulate until the target length; then:

- with probability 0.1 segment A may take everything (a single segment), else A's
  target is (target - 3) // 2;
- a sentence goes to A if A is empty, or it fits under A's target, or (with
  probability 0.5, while B is empty and A is under its target) anyway; otherwise to B;
- A is truncated to max - 2 tokens, B to max - len(A) - 3;
- with probability 0.05 the next example's target is drawn from [5, max];
- the example is `[CLS] A [SEP] B [SEP]` (B and its [SEP] only if B is non-empty),
  padded to max with 0, with its input mask and segment ids.

The end of a document flushes the sentences gathered so far. The random
draws come from one `random.Random(seed)` in the reference's order, so the
output is a deterministic function of the input and the seed.
"""

from __future__ import annotations

import random

__all__ = ["ExampleBuilder", "PackedExample"]

PackedExample = tuple  # (input_ids, input_mask, segment_ids), each a list of max_length ints


class ExampleBuilder:
    """Packs tokenized sentences into fixed-length examples (see the module docstring).

    Args:
        max_length: the example length (sequence length).
        cls_id, sep_id: the special ids.
        seed: seeds the builder's own `random.Random`.

    Example:

    >>> builder = ExampleBuilder(max_length=8, cls_id=2, sep_id=3, seed=0)
    >>> builder.add_sentence([10, 11, 12]) is None  # 3 tokens: below the target of 8
    True
    >>> builder.add_sentence([13, 14, 15]) is None
    True
    >>> ids, mask, segments = builder.end_document()  # A = first sentence, B truncated to 2
    >>> ids, mask, segments
    ([2, 10, 11, 12, 3, 13, 14, 3], [1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 1, 1])
    """

    def __init__(
        self, max_length: int, cls_id: int, sep_id: int, seed: int = 12345, pad_id: int = 0
    ):
        self.max_length = max_length
        self.cls_id, self.sep_id, self.pad_id = cls_id, sep_id, pad_id
        self.random = random.Random(seed)
        self.target_length = max_length
        self._sentences: list[list[int]] = []
        self._length = 0

    def add_sentence(self, token_ids) -> PackedExample | None:
        """Adds a sentence; returns an example when the target length is reached."""
        token_ids = list(token_ids)
        if not token_ids:
            return None
        self._sentences.append(token_ids)
        self._length += len(token_ids)
        if self._length >= self.target_length:
            return self._create_example()
        return None

    def end_document(self) -> PackedExample | None:
        """Flushes the sentences of the document that just ended (if any)."""
        if self._length:
            return self._create_example()
        return None

    def _create_example(self) -> PackedExample:
        rng = self.random
        if rng.random() < 0.1:
            first_target = 100_000  # a single segment, as for classification inputs
        else:
            first_target = (self.target_length - 3) // 2
        first, second = [], []
        for sentence in self._sentences:
            if (
                not first
                or len(first) + len(sentence) < first_target
                or (not second and len(first) < first_target and rng.random() < 0.5)
            ):
                first += sentence
            else:
                second += sentence
        first = first[: self.max_length - 2]
        second = second[: max(0, self.max_length - len(first) - 3)]
        self._sentences, self._length = [], 0
        if rng.random() < 0.05:
            self.target_length = rng.randint(5, self.max_length)
        else:
            self.target_length = self.max_length
        return self._make_example(first, second)

    def _make_example(self, first, second) -> PackedExample:
        input_ids = [self.cls_id, *first, self.sep_id]
        segment_ids = [0] * len(input_ids)
        if second:
            input_ids += [*second, self.sep_id]
            segment_ids += [1] * (len(second) + 1)
        padding = self.max_length - len(input_ids)
        input_mask = [1] * len(input_ids) + [0] * padding
        input_ids += [self.pad_id] * padding
        segment_ids += [0] * padding
        return input_ids, input_mask, segment_ids
