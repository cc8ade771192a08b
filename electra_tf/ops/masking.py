"""Dynamic masking: which positions to predict and how to show them.

Pure functions on id tensors, run inside the train step with fresh random
numbers every step (see `electra_tf.ops.random`). Following ELECTRA_SPEC.md:

- candidates are real (non-pad) tokens that are not [CLS], [SEP], [MASK] or [PAD];
- per example, k = max(1, min(N, round(num_real_tokens * mask_rate))), further capped
  by the number of candidates (a sequence with none gets k = 0);
- k distinct candidate positions are drawn uniformly without replacement (the
  reference draws N with replacement and may repeat a position);
- of the chosen positions, a `mask_token_rate` share shows [MASK], a
  `random_token_rate` share shows a uniformly random token and the rest keep
  their token (ELECTRA: 0.85 / 0 / 0.15; BERT: 0.8 / 0.1 / 0.1).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keras import ops

from electra_tf.ops.sampling import gather_positions, scatter_update

__all__ = [
    "MaskedBatch",
    "candidate_mask",
    "num_to_mask",
    "select_positions",
    "replacement_ids",
    "mask_batch",
]


class MaskedBatch(NamedTuple):
    """The result of masking a batch.

    Attributes:
        masked_ids: int32 `[B, S]`, the input shown to the generator.
        positions: int32 `[B, N]`, chosen positions (0 where unused).
        targets: int32 `[B, N]`, the original ids at `positions` (0 where unused).
        weights: float32 `[B, N]`, 1.0 for a used slot, 0.0 for padding slots.
    """

    masked_ids: Any
    positions: Any
    targets: Any
    weights: Any


def candidate_mask(token_ids, padding_mask, special_ids):
    """Positions that may be masked.

    Args:
        token_ids: int `[B, S]`.
        padding_mask: bool or int `[B, S]`, true for real tokens.
        special_ids: iterable of ints never chosen ([CLS], [SEP], [MASK], [PAD]).

    Returns:
        bool `[B, S]`.
    """
    allowed = ops.cast(padding_mask, "bool")
    for special in special_ids:
        allowed = ops.logical_and(allowed, ops.not_equal(token_ids, special))
    return allowed


def num_to_mask(padding_mask, candidates, mask_rate: float, max_predictions: int):
    """k per example: max(1, min(N, round(real_tokens * rate))), at most the candidates.

    `round` is TensorFlow's (half to even), as in the reference code.

    Returns:
        int32 `[B]`.
    """
    num_real = ops.sum(ops.cast(padding_mask, "float32"), axis=-1)
    k = ops.cast(ops.round(num_real * mask_rate), "int32")
    k = ops.maximum(1, ops.minimum(max_predictions, k))
    num_candidates = ops.sum(ops.cast(candidates, "int32"), axis=-1)
    return ops.minimum(k, num_candidates)


def select_positions(candidates, k, scores, max_predictions: int):
    """Chooses k distinct candidate positions per row: those with the highest scores.

    With `scores` uniform, this is a uniform draw without replacement.

    Args:
        candidates: bool `[B, S]`.
        k: int32 `[B]`, how many to choose per row (at most the candidates).
        scores: float `[B, S]` in (0, 1).
        max_predictions: N, the number of slots (N <= S).

    Returns:
        (positions int32 `[B, N]`, weights float32 `[B, N]`); slots past k hold
        position 0 and weight 0. Positions come in decreasing score order.
    """
    ranked = ops.where(candidates, scores, -1.0)
    top_scores, positions = ops.top_k(ranked, k=max_predictions, sorted=True)
    slots = ops.arange(max_predictions)[None, :]
    used = ops.logical_and(slots < k[:, None], top_scores > 0.0)
    positions = ops.where(used, positions, 0)
    return ops.cast(positions, "int32"), ops.cast(used, "float32")


def replacement_ids(
    targets,
    action_draw,
    token_draw,
    mask_id: int,
    vocabulary_size: int,
    mask_token_rate: float,
    random_token_rate: float,
):
    """What each chosen position shows: [MASK], a random token, or itself.

    Args:
        targets: int32 `[B, N]`, the original ids.
        action_draw: float `[B, N]` uniform: below `mask_token_rate` shows
            [MASK]; below `mask_token_rate + random_token_rate` a random token.
        token_draw: float `[B, N]` uniform, picks the random token
            (uniform over the whole vocabulary, as BERT does).

    Returns:
        int32 `[B, N]`.
    """
    random_tokens = ops.cast(token_draw * vocabulary_size, "int32")
    random_tokens = ops.minimum(random_tokens, vocabulary_size - 1)
    shown = ops.where(action_draw < mask_token_rate + random_token_rate, random_tokens, targets)
    return ops.where(action_draw < mask_token_rate, ops.full_like(targets, mask_id), shown)


def mask_batch(
    token_ids,
    padding_mask,
    *,
    position_scores,
    action_draw,
    token_draw,
    special_ids,
    mask_id: int,
    vocabulary_size: int,
    mask_rate: float,
    max_predictions: int,
    mask_token_rate: float,
    random_token_rate: float,
) -> MaskedBatch:
    """Masks a batch given its random draws (see the module docstring).

    Args:
        token_ids: int32 `[B, S]`.
        padding_mask: bool/int `[B, S]`.
        position_scores: float `[B, S]` uniform, ranks candidate positions.
        action_draw, token_draw: float `[B, N]` uniform (see `replacement_ids`).

    Returns:
        `MaskedBatch`.
    """
    token_ids = ops.cast(token_ids, "int32")
    candidates = candidate_mask(token_ids, padding_mask, special_ids)
    k = num_to_mask(padding_mask, candidates, mask_rate, max_predictions)
    positions, weights = select_positions(candidates, k, position_scores, max_predictions)
    targets = gather_positions(token_ids, positions) * ops.cast(weights, "int32")
    shown = replacement_ids(
        targets,
        action_draw,
        token_draw,
        mask_id,
        vocabulary_size,
        mask_token_rate,
        random_token_rate,
    )
    masked_ids = scatter_update(token_ids, shown, positions, weights)
    return MaskedBatch(masked_ids, positions, targets, weights)
