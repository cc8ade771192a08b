"""The two losses of ELECTRA, as weighted sums with an explicit normalizer.

Each function returns the weighted *sum* divided by `normalizer`. On one
device the normalizer is the total weight (+1e-6, as in the reference), which
gives the plain mean. Under a distribution strategy the pretrainer passes the
total weight of the *global* batch, so each replica's loss is its share of
the global mean and the summed replica gradients equal the one-device
gradient exactly.
"""

from __future__ import annotations

from keras import ops

from electra_tf.ops import backend, portable

tf = backend.tensorflow()

__all__ = [
    "sparse_softmax_cross_entropy",
    "masked_lm_loss",
    "discriminator_loss",
    "copy_mixture_loss",
    "weighted_mean_normalizer",
]


def weighted_mean_normalizer(weights):
    """sum(weights) + 1e-6: the reference's denominator on one device."""
    return ops.sum(ops.cast(weights, "float32")) + 1e-6


def _cross_entropy_rows(logits, labels):
    top = tf.stop_gradient(tf.reduce_max(logits, axis=-1))
    mass = tf.exp(logits - top[:, None])
    total = tf.reduce_sum(mass, axis=-1)
    rows = tf.range(tf.shape(logits)[0])
    at_label = tf.gather(logits, labels, batch_dims=1)
    # The label's distance below the maximum first: adding log(total) to `top` first would
    # absorb it at large logits (97 logits at -1e30 would give 0, not ln 97).
    per_row = tf.math.log(total) - (at_label - top)

    def grad(upstream):
        # d/dlogits = upstream * (softmax - onehot(label)): one scaled pass, then the labels.
        gradient = mass * (upstream / total)[:, None]
        where = tf.stack([rows, labels], axis=1)
        return tf.tensor_scatter_nd_sub(gradient, where, upstream), None

    return per_row, grad


if tf is not None:
    _cross_entropy_rows = tf.custom_gradient(_cross_entropy_rows)


def sparse_softmax_cross_entropy(logits, labels) -> tf.Tensor:
    """`tf.nn.sparse_softmax_cross_entropy_with_logits` for float32, from fewer passes.

    TensorFlow's CPU kernel takes about as long as the generator's vocabulary projection
    at 640 x 30,522 logits; this one (a max, an exp and a sum forward, one scaled pass
    backward) about half, and as exact at large logits: each row's loss is
    log(sum(exp(logits - max))) - (logit at the label - max). Labels must lie in
    [0, V): one outside is an error.

    Example:

    >>> [round(float(x), 4) for x in sparse_softmax_cross_entropy(
    ...     tf.fill([2, 97], -1e30), tf.constant([0, 5]))]  # ln 97 at equal logits
    [4.5747, 4.5747]

    Args:
        logits: float32 `[..., V]`.
        labels: int `[...]`.

    Returns:
        float32 `[...]`, -log softmax(logits)[label].
    """
    if not backend.tensorflow_fast_paths():
        return portable.sparse_softmax_cross_entropy(logits, labels)
    logits = tf.convert_to_tensor(logits, tf.float32)
    outer = tf.shape(logits)[:-1]
    flat = tf.reshape(logits, [-1, tf.shape(logits)[-1]])
    labels = tf.reshape(tf.cast(labels, tf.int32), [-1])
    return tf.reshape(_cross_entropy_rows(flat, labels), outer)


def masked_lm_loss(logits, targets, weights, normalizer=None):
    """Cross-entropy at the masked positions.

    Args:
        logits: `[B, N, V]` (any float dtype; computed in float32).
        targets: int `[B, N]`.
        weights: float `[B, N]`, 0 for padding slots.
        normalizer: scalar; defaults to `weighted_mean_normalizer(weights)`.

    Returns:
        (loss scalar, per-slot cross-entropy float32 `[B, N]`).
    """
    logits = ops.cast(logits, "float32")
    weights = ops.cast(weights, "float32")
    per_slot = sparse_softmax_cross_entropy(logits, targets)
    if normalizer is None:
        normalizer = weighted_mean_normalizer(weights)
    return ops.sum(per_slot * weights) / normalizer, per_slot


def discriminator_loss(logits, labels, weights, normalizer=None):
    """Sigmoid cross-entropy of the replaced-token detector over real tokens.

    Args:
        logits: `[B, S]` (computed in float32).
        labels: int `[B, S]`, 1 for replaced.
        weights: float `[B, S]`, the padding mask ([CLS]/[SEP] included).
        normalizer: scalar; defaults to `weighted_mean_normalizer(weights)`.

    Returns:
        (loss scalar, per-token loss float32 `[B, S]`).
    """
    logits = ops.cast(logits, "float32")
    weights = ops.cast(weights, "float32")
    if backend.tensorflow_fast_paths():
        per_token = tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(labels, tf.float32), logits=logits
        )
    else:
        per_token = portable.sigmoid_cross_entropy(labels, logits)
    if normalizer is None:
        normalizer = weighted_mean_normalizer(weights)
    return ops.sum(per_token * weights) / normalizer, per_token


def copy_mixture_loss(vocab_logits, copy_logits, input_ids, target_ids, weights, normalizer=None):
    """All-Tokens MLM's loss: -log of the copy mixture at the original token.

    The model's distribution over the token at each position is
    `D * onehot(input) + (1 - D) * softmax(vocab_logits)`, with the copy
    probability `D = sigmoid(copy_logits)` (paper, Section 3.5).

    Args:
        vocab_logits: `[B, S, V]` (computed in float32).
        copy_logits: `[B, S]`, the logit of copying the input token.
        input_ids: int `[B, S]`, the tokens the model read.
        target_ids: int `[B, S]`, the original tokens.
        weights: float `[B, S]`.
        normalizer: scalar; defaults to `weighted_mean_normalizer(weights)`.

    Returns:
        (loss scalar, per-token loss float32 `[B, S]`, predictions int32 `[B, S]`,
        the argmax of the mixture).
    """
    if normalizer is None:
        normalizer = weighted_mean_normalizer(weights)
    if not backend.tensorflow_fast_paths():
        return portable.copy_mixture_loss(
            vocab_logits, copy_logits, input_ids, target_ids, weights, normalizer
        )
    vocab_logits = tf.cast(vocab_logits, tf.float32)
    copy_logits = tf.cast(copy_logits, tf.float32)
    weights = tf.cast(weights, tf.float32)
    input_ids = tf.cast(input_ids, tf.int32)
    target_ids = tf.cast(target_ids, tf.int32)
    log_q = tf.nn.log_softmax(vocab_logits, axis=-1)
    log_q_target = tf.gather(log_q, target_ids, batch_dims=2)
    log_copy = tf.math.log_sigmoid(copy_logits)
    log_generate = tf.math.log_sigmoid(-copy_logits)
    generated = log_generate + log_q_target
    copied = tf.reduce_logsumexp(tf.stack([log_copy, generated]), axis=0)
    per_token = -tf.where(tf.equal(input_ids, target_ids), copied, generated)
    # The mixture's argmax: the input token if its total mass beats the best generated one.
    best_generated = tf.argmax(log_q, axis=-1, output_type=tf.int32)
    log_q_input = tf.gather(log_q, input_ids, batch_dims=2)
    input_mass = tf.reduce_logsumexp(tf.stack([log_copy, log_generate + log_q_input]), axis=0)
    best_mass = log_generate + tf.reduce_max(log_q, axis=-1)
    predictions = tf.where(input_mass >= best_mass, input_ids, best_generated)
    return tf.reduce_sum(per_token * weights) / normalizer, per_token, predictions
