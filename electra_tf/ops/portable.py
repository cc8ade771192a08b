"""The ELECTRA math in `keras.ops`: the same functions on TensorFlow, JAX and PyTorch.

Each function here is the portable twin of one in `random`, `sampling` or `losses`,
with the same arguments, results and docstring contract; those modules call it on
JAX and PyTorch (and on TensorFlow inside `backend.portable()`), and run their
faster TensorFlow forms otherwise. The tests hold each pair equal on tiny tensors.

The random draws are the same bits on every backend: the counter hash is integer
arithmetic modulo 2^32 (uint32 where the backend multiplies it, int64 masked to 32
bits on PyTorch, whose uint32 has no multiply), so a batch is masked and sampled
identically whichever backend trains it.
"""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.ops import backend

__all__ = [
    "row_keys",
    "uniform",
    "gather_positions",
    "scatter_update",
    "gumbel_max_sample",
    "inverse_cdf_sample",
    "block_argmax",
    "corrupt",
    "vocabulary_blocks",
    "sparse_softmax_cross_entropy",
    "sigmoid_cross_entropy",
    "copy_mixture_loss",
]

_GOLDEN = 0x9E3779B9
_MASK32 = 0xFFFFFFFF


def _word_dtype() -> str:
    """The integer type the hash runs in: uint32, or int64 kept to 32 bits on PyTorch."""
    return "int64" if backend.name() == "torch" else "uint32"


def _word(value):
    """A Python int or an integer tensor as a 32-bit word (modulo 2^32)."""
    dtype = _word_dtype()
    if isinstance(value, int):
        return ops.convert_to_tensor(value & _MASK32, dtype)
    value = ops.convert_to_tensor(value)
    if dtype == "uint32":
        if keras.backend.standardize_dtype(value.dtype) == "uint32":
            return value
        # Through int32's bits: a negative row or step wraps as it does in int64 mod 2^32.
        return ops.cast(ops.cast(value, "int32"), "uint32")
    return ops.bitwise_and(ops.cast(value, "int64"), _MASK32)


def _times(h, constant: int):
    """`h * constant` modulo 2^32."""
    product = ops.multiply(h, ops.convert_to_tensor(constant, _word_dtype()))
    return product if _word_dtype() == "uint32" else ops.bitwise_and(product, _MASK32)


def _plus_one(h):
    """`h + 1` modulo 2^32."""
    total = ops.add(h, ops.convert_to_tensor(1, _word_dtype()))
    return total if _word_dtype() == "uint32" else ops.bitwise_and(total, _MASK32)


def _shifted_xor(h, bits: int):
    return ops.bitwise_xor(h, ops.right_shift(h, ops.convert_to_tensor(bits, _word_dtype())))


def fmix32(h):
    """MurmurHash3's 32-bit finalizer on 32-bit words (as `random.fmix32`)."""
    h = _times(_shifted_xor(h, 16), 0x85EBCA6B)
    h = _times(_shifted_xor(h, 13), 0xC2B2AE35)
    return _shifted_xor(h, 16)


def _absorb(h, value):
    return fmix32(_plus_one(ops.bitwise_xor(h, _times(_word(value), _GOLDEN))))


def row_keys(seed: int, step, stream: int, rows):
    """Per-row 32-bit keys for one stream at one step (as `random.row_keys`).

    The step's high word is taken from an int64 step where the backend has one; a
    JAX step (int32 without x64) has none, so steps past 2^31 are not supported there.
    """
    h = fmix32(_word(seed ^ 0x5BD1E995))
    h = _absorb(h, seed >> 32)
    if isinstance(step, int):
        low, high = step, step >> 32
    else:
        step = ops.convert_to_tensor(step)
        if keras.backend.standardize_dtype(step.dtype) == "int64" and backend.name() != "jax":
            high = ops.right_shift(step, ops.convert_to_tensor(32, "int64"))
        else:
            high = 0
        low = step
    h = _absorb(h, low)
    h = _absorb(h, high)
    h = _absorb(h, stream)
    return _absorb(h, rows)


def uniform(keys, num_columns: int):
    """Uniform floats in (0, 1), `[R, C]`, from keys `[R]` (as `random.uniform`)."""
    columns = _times(_word(ops.arange(num_columns, dtype="int32")), _GOLDEN)
    h = fmix32(ops.bitwise_xor(ops.expand_dims(keys, 1), ops.expand_dims(columns, 0)))
    bits = ops.right_shift(h, ops.convert_to_tensor(9, _word_dtype()))
    return (ops.cast(bits, "float32") + 0.5) * (1.0 / 8388608.0)


def gather_positions(sequence, positions):
    """Rows of `sequence` `[B, S]` or `[B, S, D]` at `positions` int `[B, N]`, per example."""
    positions = ops.cast(positions, "int32")
    if len(ops.shape(sequence)) == 3:
        positions = ops.expand_dims(positions, -1)
        return ops.take_along_axis(sequence, positions, axis=1)  # broadcast over D
    return ops.take_along_axis(sequence, positions, axis=1)


def scatter_update(sequence, updates, positions, weights):
    """`sequence` `[B, S]` with `updates` `[B, N]` at `positions` where `weights` > 0; on a
    repeated position the last such slot wins (as `sampling.scatter_update`)."""
    length = ops.shape(sequence)[1]
    num_slots = ops.shape(positions)[1]
    hits = ops.logical_and(
        ops.equal(ops.expand_dims(ops.cast(positions, "int32"), 2), ops.arange(length)[None, None]),
        ops.expand_dims(ops.cast(weights, "bool"), 2),
    )  # [B, N, S]
    rank = ops.where(hits, ops.arange(1, num_slots + 1)[None, :, None], 0)
    winner = ops.cast(ops.argmax(rank, axis=1), "int32")  # [B, S]
    written = ops.any(hits, axis=1)
    chosen = ops.take_along_axis(updates, winner, axis=1)
    return ops.where(written, chosen, sequence)


def _lowered(logits, temperature, disallow):
    logits = ops.stop_gradient(ops.cast(logits, "float32"))
    if temperature != 1.0:
        logits = logits / temperature
    if disallow is not None:
        vocabulary = ops.shape(logits)[-1]
        logits = logits - 1000.0 * ops.one_hot(ops.cast(disallow, "int32"), vocabulary)
    return logits


def gumbel_max_sample(logits, noise_uniform, temperature: float = 1.0, disallow=None):
    """Ids `[...]` from softmax(logits / temperature) by Gumbel-max, no gradient."""
    logits = _lowered(logits, temperature, disallow)
    gumbel = -ops.log(-ops.log(noise_uniform))
    return ops.cast(ops.argmax(logits + gumbel, axis=-1), "int32")


def _blocks(values, length: int, fill: float):
    vocabulary = ops.shape(values)[-1]
    extra = -vocabulary % length
    if extra:
        values = ops.pad(values, [[0, 0], [0, extra]], constant_values=fill)
    return ops.reshape(values, (ops.shape(values)[0], -1, length))


def _take_rows(values, index):
    """`values[r, index[r]]` for `values` `[R, K, ...]` and `index` int `[R]`."""
    index = ops.reshape(ops.cast(index, "int32"), (-1, 1) + (1,) * (len(ops.shape(values)) - 2))
    return ops.squeeze(ops.take_along_axis(values, index, axis=1), 1)


def _choose(masses, point):
    cumulative = ops.cumsum(masses, axis=-1)
    point = ops.minimum(point, cumulative[:, -1] * (1.0 - 2.0**-22))
    index = ops.sum(ops.cast(cumulative <= point[:, None], "int32"), axis=-1)
    index = ops.minimum(index, ops.shape(masses)[1] - 1)
    before = _take_rows(ops.pad(cumulative, [[0, 0], [1, 0]]), index)
    return index, point - before


def inverse_cdf_sample(logits, uniform, temperature: float = 1.0, disallow=None):
    """Ids `[...]` from softmax(logits / temperature) by the same two-level CDF inversion as
    `sampling.inverse_cdf_sample` (blocks, slices of 128, entries), no gradient."""
    outer = ops.shape(logits)[:-1]
    vocabulary = ops.shape(logits)[-1]
    logits = ops.reshape(_lowered(logits, temperature, disallow), (-1, vocabulary))
    length = vocabulary_blocks(vocabulary)
    blocks = _blocks(logits, length, float("-inf"))  # [R, K, L]
    top = ops.max(ops.max(blocks, axis=-1), axis=-1)
    mass = ops.exp(blocks - top[:, None, None])
    block_mass = ops.sum(mass, axis=-1)  # [R, K]
    point = ops.reshape(uniform, (-1,)) * ops.sum(block_mass, axis=-1)
    block, point = _choose(block_mass, point)
    pieces = _blocks(_take_rows(mass, block), 128, 0.0)  # [R, ceil(L / 128), 128]
    piece, point = _choose(ops.sum(pieces, axis=-1), point)
    entry, _ = _choose(_take_rows(pieces, piece), point)
    ids = block * length + ops.minimum(piece * 128 + entry, length - 1)
    return ops.reshape(ids, outer)


def vocabulary_blocks(vocabulary: int) -> int:
    """The block length L that `inverse_cdf_sample` and `block_argmax` split `vocabulary` into.

    The smallest divisor of `vocabulary` at least its square root and at most the larger
    of 8 x that root and 8,192 (30,522 = 6 x 5,087: L = 5,087), so the blocks tile the
    row without padding; a vocabulary with no such divisor (a prime, say) is padded to
    whole blocks of ceil(sqrt(vocabulary)) instead.
    """
    root = max(1, int(vocabulary**0.5))
    for length in range(root, max(8 * root, 8192) + 1):
        if vocabulary % length == 0 and length * length >= vocabulary:
            return length
    return root if root * root >= vocabulary else root + 1


def block_argmax(logits):
    """`argmax(logits, axis=-1)` as int32 (first maximum on ties)."""
    return ops.cast(ops.argmax(logits, axis=-1), "int32")


def corrupt(token_ids, positions, weights, samples):
    """(corrupted ids, replaced labels), both int32 `[B, S]` (as `sampling.corrupt`)."""
    token_ids = ops.cast(token_ids, "int32")
    corrupted = scatter_update(token_ids, ops.cast(samples, "int32"), positions, weights)
    return corrupted, ops.cast(ops.not_equal(corrupted, token_ids), "int32")


def sparse_softmax_cross_entropy(logits, labels):
    """-log softmax(logits)[label], float32 `[...]`: log(sum(exp(l - max))) - (l[label] - max)."""
    logits = ops.cast(logits, "float32")
    top = ops.stop_gradient(ops.max(logits, axis=-1, keepdims=True))
    total = ops.sum(ops.exp(logits - top), axis=-1)
    labels = ops.expand_dims(ops.cast(labels, "int32"), -1)
    at_label = ops.squeeze(ops.take_along_axis(logits, labels, axis=-1), -1)
    return ops.log(total) - (at_label - ops.squeeze(top, -1))


def sigmoid_cross_entropy(labels, logits):
    """Per-element sigmoid cross-entropy in TensorFlow's stable form:
    max(x, 0) - x * z + log(1 + exp(-|x|))."""
    logits = ops.cast(logits, "float32")
    labels = ops.cast(labels, "float32")
    return ops.relu(logits) - logits * labels + ops.log1p(ops.exp(-ops.abs(logits)))


def _at(values, ids):
    """`values[..., ids]` per position: `values` `[B, S, V]`, `ids` int `[B, S]`."""
    ids = ops.expand_dims(ops.cast(ids, "int32"), -1)
    return ops.squeeze(ops.take_along_axis(values, ids, axis=-1), -1)


def copy_mixture_loss(vocab_logits, copy_logits, input_ids, target_ids, weights, normalizer):
    """All-Tokens MLM's copy-mixture loss (as `losses.copy_mixture_loss`, normalizer given).

    Returns:
        (loss scalar, per-token loss float32 `[B, S]`, predictions int32 `[B, S]`).
    """
    copy_logits = ops.cast(copy_logits, "float32")
    input_ids = ops.cast(input_ids, "int32")
    target_ids = ops.cast(target_ids, "int32")
    log_q = ops.log_softmax(ops.cast(vocab_logits, "float32"), axis=-1)
    log_copy = ops.log_sigmoid(copy_logits)
    log_generate = ops.log_sigmoid(-copy_logits)
    generated = log_generate + _at(log_q, target_ids)
    copied = ops.logsumexp(ops.stack([log_copy, generated]), axis=0)
    per_token = -ops.where(ops.equal(input_ids, target_ids), copied, generated)
    best_generated = ops.cast(ops.argmax(log_q, axis=-1), "int32")
    input_mass = ops.logsumexp(ops.stack([log_copy, log_generate + _at(log_q, input_ids)]), axis=0)
    best_mass = log_generate + ops.max(log_q, axis=-1)
    predictions = ops.where(input_mass >= best_mass, input_ids, best_generated)
    loss = ops.sum(per_token * ops.cast(weights, "float32")) / normalizer
    return loss, per_token, predictions
