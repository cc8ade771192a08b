"""The discriminator's forward pass for serving, written for the inference graph.

`ServingModule` (and so every SavedModel for TF Serving) computes its outputs
with `discriminator_outputs`: the same weights and the same maths as the
Keras layers (`ElectraEncoder`, keras-hub's `TransformerEncoder` and the
replaced-token detection head), laid out for what TensorFlow's CPU graph
optimizer (grappler with oneDNN) fuses and what it pays for:

- activations stay `[B*S, H]`, so every projection is one 2-D `MatMul` with
  `BiasAdd` (and exact GELU, written as `x * ((erf(x / sqrt 2) + 1) / 2)`, the
  pattern grappler fuses into the matmul); Keras's 3-D `EinsumDense` and
  `Dense` need shape arithmetic around each matmul in a graph whose batch and
  length are unknown;
- query, key and value come from one matmul against the three kernels side
  by side, and attention moves heads with two transposes per block (Keras's
  `einsum`s use five);
- where the feed-forward layer widens a narrow input (at most 256 to at least
  1024, ELECTRA-Small's 256 -> 1024), its kernel can be read stored transposed
  `[out, in]` (`transposed_wide_kernels`): oneDNN's AVX2 matmul runs that
  product at batch 1 in 0.46 ms against 0.81 (on AVX-512, 0.56 against 0.48);
- the padding mask becomes one additive bias for all blocks, as the
  encoder's `AdditiveMaskAttention` adds it (an example with no real token
  attends evenly; nothing reads its outputs);
- `lanes` (the fine-tuned task exports: two) splits each block into independent chains,
  one per share of the heads and of the feed-forward units, summed where the block adds its
  residual: a small call's products (TensorFlow runs a product of a few dozen rows on one
  thread) then run side by side on the inter-op threads, 1.8x faster at batch 1 on two
  cores (docs/results/serving.md);
- `packed=True` (the fine-tuned task exports) skips padding: the per-token layers run on
  the real tokens `[T, H]`, attention alone on `[B, S]` (1.5x faster for 32 reviews padded
  to their longest, docs/results/serving.md).

About 1.1x faster than the Keras layers at batch 1 and 32 on two AVX2 cores
(docs/results/performance.md). Outputs equal the Keras model's within float32
rounding (tests/serving/test_inference.py). The layers this reads must be the
ones `ElectraEncoder` builds (post-LayerNorm blocks); `supports` says whether
they are, and `ServingModule` falls back to the Keras call when not.
"""

from __future__ import annotations

import functools
import math

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from electra_tf.layers import kernels
from electra_tf.serving.lanes import lane_variables, lane_weights, lanes_fit, resolve_lanes

__all__ = [
    "supports",
    "discriminator_outputs",
    "as_constant",
    "encoder_sequence",
    "fused_qkv",
    "lane_variables",
    "lane_weights",
    "lanes_fit",
    "resolve_lanes",
    "rows_kept",
    "widens_narrow_input",
    "transposed_wide_kernels",
]

_SQRT_HALF = 0.7071067811865476


def _is_exact_gelu(activation) -> bool:
    # keras.activations.gelu's default is the exact form.
    return activation is kernels.gelu or activation is keras.activations.gelu


def supports(discriminator) -> bool:
    """Whether `discriminator_outputs` reproduces this discriminator's Keras forward pass."""
    encoder = getattr(discriminator, "encoder", None)
    head = getattr(discriminator, "rtd_head", None)
    if encoder is None or head is None or not encoder.built:
        return False
    for layer in encoder.transformer_layers:
        if not isinstance(layer, keras_hub.layers.TransformerEncoder) or layer.normalize_first:
            return False
        if not _is_exact_gelu(layer._feedforward_intermediate_dense.activation):
            return False
        attention = layer._self_attention_layer
        if attention._query_dense.equation != "abc,cde->abde" or not attention._use_bias:
            return False
    return _is_exact_gelu(head.dense.activation) and head.dense_prediction.activation in (
        None,
        keras.activations.linear,
    )


def _gelu(x):
    return x * ((tf.math.erf(x * _SQRT_HALF) + 1.0) * 0.5)


def _as(value, dtype):
    """`value` (a weight) read in `dtype`: itself in float32, a cast otherwise."""
    return value if dtype == tf.float32 else tf.cast(value, dtype)


def as_constant(value, dtype):
    """`value` (a weight) in `dtype`: itself in float32; otherwise, for a variable, its value
    now written into the graph as a constant of `dtype`, else a cast.

    oneDNN keeps the reordered form of a constant operand between calls, so a bfloat16 pass
    whose weights are constants neither casts nor reorders them per call: on a 2-core Intel
    Xeon with AMX the served MiniLM encoder then took 3.3 ms at `[1, 27]` against 4.1 with
    bfloat16 variables, 5.2 in float32 (docs/results/serving.md). Read only at trace time:
    a graph traced with it keeps the values it saw.
    """
    if dtype == tf.float32 or not hasattr(value, "numpy"):
        return _as(value, dtype)
    with tf.init_scope():  # the variable's value, read eagerly while tracing
        array = np.asarray(value.numpy(), np.float32)
    return tf.constant(array.astype(dtype.as_numpy_dtype))


def _dense(x, layer, read=_as):
    """`[N, in] -> [N, out]` with the layer's kernel and bias (activation not applied), in
    `x`'s dtype (each weight through `read`, `_as` or `as_constant`)."""
    kernel = tf.reshape(read(layer.kernel, x.dtype), [-1, layer.kernel.shape[-1]])
    return tf.nn.bias_add(tf.matmul(x, kernel), read(layer.bias, x.dtype))


def _layer_norm(x, layer):
    if x.dtype != tf.float32:  # statistics in float32, as Keras's mixed precision keeps them
        return tf.cast(_layer_norm(tf.cast(x, tf.float32), layer), x.dtype)
    mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
    scale = tf.math.rsqrt(variance + layer.epsilon) * layer.gamma
    return x * scale + (layer.beta - mean * scale)


def _layer_norm_lite(x, layer):
    """The same LayerNorm in the form the LiteRT converter lowers to 9 builtin ops (MEAN,
    SQUARED_DIFFERENCE, MEAN, ADD, RSQRT, SUB, MUL, MUL, ADD) where `_layer_norm`'s moments
    take 10, with 5 of them over every element instead of 6."""
    centered = x - tf.reduce_mean(x, axis=-1, keepdims=True)
    variance = tf.reduce_mean(tf.square(centered), axis=-1, keepdims=True)
    return centered * tf.math.rsqrt(variance + layer.epsilon) * layer.gamma + layer.beta


def fused_qkv(encoder) -> list:
    """Per block: the query, key and value kernels side by side `[H, 3H]`, their biases `[3H]`."""
    hidden = encoder.hidden_dim
    fused = []
    for layer in encoder.transformer_layers:
        attention = layer._self_attention_layer
        projections = (attention._query_dense, attention._key_dense, attention._value_dense)
        kernel = tf.concat([tf.reshape(p.kernel, [hidden, hidden]) for p in projections], 1)
        bias = tf.concat([tf.reshape(p.bias, [hidden]) for p in projections], 0)
        fused.append((kernel, bias))
    return fused


def _rows_of(kernel, lane: int, lanes: int):
    """Lane `lane`'s share of the rows of a kernel read as `[in, out]`: a slice of dimension
    0, which TensorFlow takes without copying."""
    kernel = tf.reshape(kernel, [-1, kernel.shape[-1]])
    share = kernel.shape[0] // lanes
    return kernel[lane * share : (lane + 1) * share]


def widens_narrow_input(encoder) -> bool:
    """Whether the feed-forward layer goes from at most 256 features to at least 1024."""
    hidden, intermediate = encoder.hidden_dim, encoder.intermediate_dim
    return hidden < intermediate and kernels.narrow_and_wide(hidden, intermediate)


def transposed_wide_kernels(encoder) -> list:
    """Per block, the feed-forward intermediate kernel stored transposed, `[intermediate, H]`."""
    return [
        tf.transpose(layer._feedforward_intermediate_dense.kernel)
        for layer in encoder.transformer_layers
    ]


def encoder_sequence(
    encoder, token_ids, padding_mask, segment_ids, qkv_weights=None, wide_kernels_t=None,
    litert=False, packed=False, first_only=False, dtype=tf.float32, lanes=None, read=_as,
):  # fmt: skip
    """The encoder's last hidden states as `[B*S, H]` (inference: no dropout).

    `qkv_weights`: `fused_qkv(encoder)` made once (for example as variables of a
    serving module), so that a call does not concatenate the kernels again;
    by default they are concatenated from the layers in the graph.
    `wide_kernels_t`: `transposed_wide_kernels(encoder)` made once; the
    feed-forward intermediate matmul then reads them (`x @ kernel_t^T`, the
    same product) instead of the layers' kernels.
    `litert`: write GELU as `tf.nn.gelu`, the mask as a reshape and LayerNorm as
    `_layer_norm_lite`, the forms the LiteRT converter turns into its builtin GELU and
    RESHAPE and fewest ops (the same numbers up to rounding).
    `packed`: every per-token layer (embeddings, projections, feed-forward, LayerNorm) runs
    on the kept rows only, `[T, H]`: the real tokens and each sequence's first position
    (`rows_kept`). A batch padded to its longest text then costs its tokens, not
    batch x width; attention gathers query, key and value into `[B, S]` (`packed_grid`:
    padding gets a copy of a real row, which the mask hides) and gathers its output. Kept
    rows equal the padded computation's; the other rows of the output are zeros.
    `first_only`: the last block computes each sequence's first position alone (its keys
    and values still read every position), for heads that read only it: the result is
    `[B, H]`, the first rows of the full result.
    `dtype`: tf.bfloat16 runs the products, attention and GELU in bfloat16 (weights cast
    per call; LayerNorm statistics in float32); the result is float32 either way.
    `lanes`: `lane_weights(encoder, L)` made once; each block then runs as L independent
    chains (its heads and feed-forward units split in L), which the inter-op threads run
    side by side (`qkv_weights` and `wide_kernels_t` are not read). The same sums in
    another order: equal within float32 rounding.
    `read`: how a weight is read in `dtype`, `_as` (a cast per call) or `as_constant`
    (written into the graph once, in `dtype`).
    """
    shape = tf.shape(token_ids)
    batch, length = shape[0], shape[1]
    rows, grid = _packing(padding_mask) if packed else (None, None)
    norm = _layer_norm_lite if litert else _layer_norm
    x = _embedded(encoder.embeddings, token_ids, segment_ids, length, rows, norm)
    x = _as(x, dtype)
    if encoder.embeddings_project is not None:
        x = _dense(x, encoder.embeddings_project, read)
    hidden, heads = encoder.hidden_dim, encoder.num_heads
    mask = (
        tf.reshape(padding_mask, [batch, 1, 1, length])
        if litert
        else padding_mask[:, None, None, :]
    )
    bias = kernels.mask_bias(mask, x.dtype)  # [B, 1, 1, S]
    gelu = functools.partial(tf.nn.gelu, approximate=False) if litert else _gelu
    if lanes is not None:
        qkv_weights = [None] * len(lanes)
    elif qkv_weights is None:
        qkv_weights = fused_qkv(encoder)
    if wide_kernels_t is None:
        wide_kernels_t = [None] * len(encoder.transformer_layers)
    blocks = zip(encoder.transformer_layers, qkv_weights, wide_kernels_t, strict=True)
    last = len(encoder.transformer_layers) - 1
    for i, (layer, fused, wide_kernel_t) in enumerate(blocks):
        first = first_only and i == last
        if lanes is not None:
            where = (batch, length, heads, rows, first, grid)
            x = _lane_block(x, layer, lanes[i], bias, where, gelu, norm, read)
            continue
        attention = layer._self_attention_layer
        qkv = tf.nn.bias_add(tf.matmul(x, read(fused[0], dtype)), read(fused[1], dtype))
        context = _attention(qkv, bias, batch, length, heads, rows, first, grid)
        if first:  # from here on, [B, H]: each sequence's first position
            x = _first_rows(x, batch, length, rows)
        attended = _dense(context, attention._output_dense, read)
        x = norm(attended + x, layer._self_attention_layer_norm)
        x = _feed_forward(x, layer, gelu, wide_kernel_t, norm, read)
    x = tf.cast(x, tf.float32)  # no op in float32
    if packed and not first_only:
        x = tf.scatter_nd(rows[:, None], x, tf.stack([batch * length, hidden]))
    return x


def _feed_forward(x, layer, gelu, wide_kernel_t=None, norm=_layer_norm, read=_as):
    """A block's feed-forward half with its residual and LayerNorm, on `[N, H]` rows; the
    intermediate product reads `wide_kernel_t` (`transposed_wide_kernels`) when given."""
    intermediate = layer._feedforward_intermediate_dense
    if wide_kernel_t is None:
        inner = gelu(_dense(x, intermediate, read))
    else:
        product = tf.matmul(x, read(wide_kernel_t, x.dtype), transpose_b=True)
        inner = gelu(tf.nn.bias_add(product, read(intermediate.bias, x.dtype)))
    output = _dense(inner, layer._feedforward_output_dense, read)
    return norm(output + x, layer._feedforward_layer_norm)


def _lane_block(x, layer, block, bias, where, gelu, norm=_layer_norm, read=_as):
    """One block as `len(block)` independent chains (`lane_weights`), joined where it adds its
    residuals; `where`: (batch, length, heads, rows, first_only, grid) as `_attention` reads
    them."""
    batch, length, heads, rows, first, grid = where
    lanes, dtype = len(block), x.dtype
    contexts = []
    for kernel, qkv_bias, _, _ in block:
        qkv = tf.nn.bias_add(tf.matmul(x, read(kernel, dtype)), read(qkv_bias, dtype))
        contexts.append(_attention(qkv, bias, batch, length, heads // lanes, rows, first, grid))
    if first:  # from here on, [B, H]: each sequence's first position
        x = _first_rows(x, batch, length, rows)
    out = layer._self_attention_layer._output_dense
    x = norm(_joined(contexts, out, read) + x, layer._self_attention_layer_norm)
    inners = [
        gelu(tf.nn.bias_add(tf.matmul(x, read(kernel, dtype)), read(unit_bias, dtype)))
        for _, _, kernel, unit_bias in block
    ]
    out = layer._feedforward_output_dense
    return norm(_joined(inners, out, read) + x, layer._feedforward_layer_norm)


def _joined(parts, layer, read=_as):
    """`layer` (a projection) on the lanes' `parts` side by side: each part times its share
    of the kernel's rows, summed, plus the bias.

    Below float32 each product takes its share of the bias (`bias / L`, exact for 2 and 4
    lanes), so that it is one fused oneDNN op, which keeps a constant kernel's prepared form
    between calls: a bare bfloat16 product at 24 rows took 100 us, with a bias 81; the
    served bfloat16 classifier 1.05-1.19x faster. In float32 (variables) the split bias
    gained nothing (0.91-1.04x), so the float32 pass adds the bias once.
    """
    lanes, dtype = len(parts), parts[0].dtype
    kernel = read(layer.kernel, dtype)
    bias = tf.reshape(read(layer.bias, dtype), [-1])
    if dtype == tf.float32:
        products = [tf.matmul(part, _rows_of(kernel, j, lanes)) for j, part in enumerate(parts)]
        return tf.nn.bias_add(tf.add_n(products), bias)
    share = bias * (1.0 / lanes)
    products = [
        tf.nn.bias_add(tf.matmul(part, _rows_of(kernel, j, lanes)), share)
        for j, part in enumerate(parts)
    ]
    return tf.add_n(products)


def _first_rows(x, batch, length, rows=None):
    """Each sequence's first position `[B, H]` of `[B*S, H]` (or of the packed `[T, H]`)."""
    if rows is None:
        return tf.reshape(x, [batch, length, x.shape[-1]])[:, 0, :]
    return tf.gather(x, tf.reshape(tf.where(tf.equal(tf.math.floormod(rows, length), 0)), [-1]))


def _embedded(embeddings, token_ids, segment_ids, length, rows=None, norm=_layer_norm):
    """The embedding layer's output (before any projection): `[B*S, E]`, or `[T, E]` for
    the flat `rows` of a packed pass."""
    positions = embeddings.position_embedding.embeddings
    if rows is None:
        positions = positions[:length]
    else:  # the kept rows' ids and positions
        token_ids = tf.gather(tf.reshape(token_ids, [-1]), rows)
        segment_ids = tf.gather(tf.reshape(segment_ids, [-1]), rows)
        positions = tf.gather(positions, tf.math.floormod(rows, length))
    x = (
        tf.gather(embeddings.token_embedding.embeddings, token_ids)
        + tf.gather(embeddings.segment_embedding.embeddings, segment_ids)
        + positions
    )
    return norm(tf.reshape(x, [-1, embeddings.embedding_dim]), embeddings.layer_norm)


def _attention(qkv, bias, batch, length, heads, rows=None, first_only=False, grid=None):
    """Self-attention's output `[B*S, H]` (or `[T, H]`, packed) from query, key and value side
    by side `[B*S, 3H]` (or `[T, 3H]`, gathered into `[B*S, 3H]` first by `grid`,
    `packed_grid`); `first_only`: the output at each sequence's first position alone,
    `[B, H]`."""
    hidden = qkv.shape[-1] // 3
    head_dim = hidden // heads
    if rows is not None:
        qkv = tf.gather(qkv, grid)
    qkv = tf.transpose(tf.reshape(qkv, [batch, length, 3, heads, head_dim]), [2, 0, 3, 1, 4])
    query, key, value = tf.unstack(qkv)  # each [B, heads, S, head_dim]
    if first_only:
        query = query[:, :, :1, :]
    scores = tf.matmul(query * (1.0 / math.sqrt(head_dim)), key, transpose_b=True) + bias
    probabilities = tf.nn.softmax(scores)
    context = tf.transpose(tf.matmul(probabilities, value), [0, 2, 1, 3])
    context = tf.reshape(context, [-1, hidden])
    return context if rows is None or first_only else tf.gather(context, rows)


def _kept(padding_mask) -> tf.Tensor:
    """Flat `[B*S]` bool: where the mask is set (above 0.5, as `mask_bias` reads it), and
    position 0 of every sequence."""
    mask = tf.convert_to_tensor(padding_mask)
    keep = mask if mask.dtype == tf.bool else tf.cast(mask, tf.float32) > 0.5
    first = tf.equal(tf.range(tf.shape(mask)[1]), 0)[None, :]
    return tf.reshape(tf.logical_or(keep, first), [-1])


def rows_kept(padding_mask) -> tf.Tensor:
    """The flat row numbers (`b * S + s`, int32, ascending) a packed pass computes: where the
    mask is set (above 0.5, as `mask_bias` reads it), and position 0 of every sequence."""
    return _packing(padding_mask)[0]


def packed_grid(padding_mask) -> tf.Tensor:
    """For each flat position `b * S + s`, the packed row attention reads there `[B*S]`: its
    own where kept (`rows_kept`), else the last kept row before it (position 0 always is).

    Padded keys and values then hold a real row's numbers instead of zeros; the mask's bias
    gives them probability exactly 0 either way, and no padded query is read. One gather
    instead of a scatter: `ScatterNd` took 20 us a block at batch 1, a gather about 4.
    """
    return _packing(padding_mask)[1]


def _packing(padding_mask) -> tuple:
    """(`rows_kept`, `packed_grid`) from one reading of the mask."""
    keep = _kept(padding_mask)
    rows = tf.cast(tf.reshape(tf.where(keep), [-1]), tf.int32)
    return rows, tf.cumsum(tf.cast(keep, tf.int32)) - 1


def discriminator_outputs(
    discriminator, token_ids, padding_mask, segment_ids, qkv_weights=None, wide_kernels_t=None,
    lanes=None,
) -> dict:  # fmt: skip
    """`rtd_logits`, `rtd_probabilities`, `sequence_output` and `pooled_output`, as served
    (`lanes`: `lane_weights`, see `encoder_sequence`)."""
    encoder, head = discriminator.encoder, discriminator.rtd_head
    shape = tf.shape(token_ids)
    x = encoder_sequence(
        encoder, token_ids, padding_mask, segment_ids, qkv_weights, wide_kernels_t, lanes=lanes
    )
    logits = tf.reshape(_dense(_gelu(_dense(x, head.dense)), head.dense_prediction), shape)
    sequence = tf.reshape(x, [shape[0], shape[1], encoder.hidden_dim])
    return {
        "rtd_logits": logits,
        "rtd_probabilities": tf.sigmoid(logits),
        "sequence_output": sequence,
        "pooled_output": sequence[:, 0, :],
    }
