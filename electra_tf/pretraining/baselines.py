"""Count-based baselines that put a pre-trained model's held-out figures in context.

`BigramDetector` is a replaced-token detector with no learned weights: it
counts adjacent token pairs in the training text and calls a token replaced
when it fits badly beside its neighbours. Scored on the very corruptions the
discriminator saw, its AUC says how much of the detection task plain bigram
statistics already solve, which a discriminator worth keeping should beat.

Example:

>>> detector = BigramDetector(vocabulary_size=4)
>>> detector.update(np.array([[1, 2, 1, 2, 1, 2]]), np.ones((1, 6)))
>>> scores = detector.scores(np.array([[1, 2, 2, 2]]), np.ones((1, 4)))
>>> bool(scores[0, 2] > scores[0, 1])  # "2 2" never occurs, "1 2" does
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["BigramDetector"]


class BigramDetector:
    """Scores tokens by how unusual they are beside their neighbours (higher: more likely replaced).

    A token's score is minus the sum of its pointwise mutual information with the
    real token on its left and with the one on its right, estimated from counts
    with add-`smoothing` on every pair and every token:

        pmi(a, b) = log p(b | a) - log p(b)
        p(b | a) = (count(a b) + s) / (count(a .) + s V),  p(b) = (count(b) + s) / (N + s V)

    Only adjacent pairs of real tokens (padding mask 1) count, and a missing
    neighbour adds nothing to the score.

    Args:
        vocabulary_size: V, the number of token ids.
        smoothing: s, the count added to every pair and every token.
    """

    def __init__(self, vocabulary_size: int, smoothing: float = 1.0):
        if vocabulary_size < 1:
            raise ValueError(f"vocabulary_size must be >= 1, got {vocabulary_size}.")
        if smoothing <= 0:
            raise ValueError(f"smoothing must be > 0, got {smoothing}.")
        self.vocabulary_size = int(vocabulary_size)
        self.smoothing = float(smoothing)
        self._tokens = np.zeros(self.vocabulary_size, np.int64)
        self._pair_chunks: list[np.ndarray] = []
        self._pairs: tuple[np.ndarray, np.ndarray] | None = None

    @staticmethod
    def _pairs_of(token_ids, padding_mask, vocabulary_size):
        """int64 codes `left * V + right` of the adjacent real-token pairs."""
        ids = np.asarray(token_ids, np.int64)
        real = np.asarray(padding_mask) > 0
        both = real[:, :-1] & real[:, 1:]
        return (ids[:, :-1] * vocabulary_size + ids[:, 1:])[both]

    def update(self, token_ids, padding_mask) -> None:
        """Counts the tokens and adjacent pairs of a batch `[B, S]`."""
        ids = np.asarray(token_ids, np.int64)
        real = np.asarray(padding_mask) > 0
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocabulary_size):
            raise ValueError(
                f"token ids must lie in [0, {self.vocabulary_size}), got {ids.min()}..{ids.max()}."
            )
        self._tokens += np.bincount(ids[real], minlength=self.vocabulary_size)
        codes, counts = np.unique(
            self._pairs_of(ids, real, self.vocabulary_size), return_counts=True
        )
        self._pair_chunks.append(np.stack([codes, counts]))
        self._pairs = None

    def _pair_table(self):
        if self._pairs is None:
            if self._pair_chunks:
                chunks = np.concatenate(self._pair_chunks, axis=1)
                codes, inverse = np.unique(chunks[0], return_inverse=True)
                counts = np.bincount(inverse, weights=chunks[1]).astype(np.int64)
                self._pair_chunks = [np.stack([codes, counts])]
            else:
                codes = counts = np.zeros(0, np.int64)
            left = np.bincount(
                codes // self.vocabulary_size, weights=counts, minlength=self.vocabulary_size
            )
            self._pairs = (codes, counts, left)
        return self._pairs

    def pmi(self, left, right) -> np.ndarray:
        """Smoothed pointwise mutual information of token pairs (arrays of equal shape)."""
        left = np.asarray(left, np.int64)
        right = np.asarray(right, np.int64)
        codes, counts, left_totals = self._pair_table()
        v, s = self.vocabulary_size, self.smoothing
        query = left * v + right
        where = np.minimum(np.searchsorted(codes, query), max(len(codes) - 1, 0))
        pair = np.where(codes[where] == query, counts[where], 0) if len(codes) else 0 * query
        conditional = (pair + s) / (left_totals[left] + s * v)
        marginal = (self._tokens[right] + s) / (self._tokens.sum() + s * v)
        return np.log(conditional) - np.log(marginal)

    def scores(self, token_ids, padding_mask) -> np.ndarray:
        """float64 `[B, S]`: minus each token's PMI with its real neighbours."""
        ids = np.asarray(token_ids, np.int64)
        real = np.asarray(padding_mask) > 0
        both = real[:, :-1] & real[:, 1:]
        link = np.where(both, self.pmi(ids[:, :-1], ids[:, 1:]), 0.0)  # [B, S-1]
        fit = np.zeros(ids.shape, np.float64)
        fit[:, 1:] += link  # with the left neighbour
        fit[:, :-1] += link  # with the right neighbour
        return -fit
