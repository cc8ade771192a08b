"""Faster forms of four Keras pieces inside the encoder, the same maths.

The step profile (`electra-tf bench profile`, docs/results/performance.md) puts
time into four places where Keras 3 on TensorFlow does more work than the
maths needs:

- **Dropout** draws one float per element from Philox. `dropout` draws one
  32-bit word per *two* elements and compares each 16-bit half with
  `round(rate * 65536)`, so an element is dropped with probability
  `round(rate * 65536) / 65536` (0.1 becomes 0.1000061; a float uniform has a
  grid of its own, 2^-23 wide).
- **Exact GELU** differentiated op by op builds a chain of elementwise
  kernels; `gelu` gives its derivative in closed form,
  `Phi(x) + x * phi(x)`.
- **The attention projections** (`EinsumDense`, equations `abc,cde->abde`
  and `abcd,cde->abe`) run in Keras as a batched matmul broadcasting the
  kernel over the batch, whose gradient is one matmul per example and a sum.
  `ProjectionDense` runs them as one 2-D matmul (`tensordot`).
- **The feed-forward kernels' gradients** (`keras.layers.Dense`) are the
  slowest matmuls of the step on oneDNN's AVX2 kernels. `FastDense` takes
  them from `weight_gradient`, which picks a faster operand layout there.
- **The attention mask** (`keras.layers.MultiHeadAttention`) is applied by
  two selects around the softmax; `AdditiveMaskAttention` adds it instead.

`speed_up(layer)` turns the plain `keras.layers.Dropout`, `keras.layers.Dense`,
`keras.layers.EinsumDense` and `keras.layers.MultiHeadAttention` sub-layers of a
built layer into these subclasses.
They override `call` only and own no state, so weights, seed generators and
checkpoints are unchanged. Inside `with keras_kernels():` encoders are built
with Keras's own pieces instead (`electra-tf bench kernels` times the two).

These forms are TensorFlow's: on the JAX and PyTorch backends (and inside
`electra_tf.ops.backend.portable()`) the encoder keeps Keras's own layers and
exact GELU, the same maths (tests/models/test_backends.py holds them equal).
"""

from __future__ import annotations

import contextlib
import functools
import os

import keras

from electra_tf.ops import backend

tf = backend.tensorflow()

__all__ = [
    "dropout",
    "gelu",
    "FastDropout",
    "ProjectionDense",
    "AdditiveMaskAttention",
    "mask_bias",
    "speed_up",
    "keras_kernels",
    "gelu_activation",
    "FastDense",
    "matmul_2d",
    "weight_gradient",
    "wide_gradient_layout",
    "gradient_layout",
    "onednn_runs_avx2",
    "narrow_and_wide",
]

_ENABLED = [True]

_HALF_WORDS = 65536
#: EinsumDense equations that are a matmul over the last axes: contracted axes of (input, kernel).
_MATMUL_AXES = {"abc,cde->abde": [[2], [0]], "abcd,cde->abe": [[2, 3], [0, 1]]}


def dropout(inputs, rate: float, seed) -> tf.Tensor:
    """`inputs` with elements zeroed at `rate`, the rest scaled by `1 / (1 - rate)`.

    Args:
        inputs: float tensor of any shape.
        rate: drop probability in [0, 1); used as `round(rate * 65536) / 65536`.
        seed: int32 `[2]`, a stateless seed; the mask is a pure function of it.

    Returns:
        A tensor shaped and typed as `inputs`.
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout rate must be in [0, 1), got {rate}.")
    inputs = tf.convert_to_tensor(inputs)
    threshold = round(rate * _HALF_WORDS)
    if threshold == 0:
        return inputs
    size = tf.size(inputs)
    words = tf.random.stateless_uniform(
        [(size + 1) // 2], seed=seed, minval=None, maxval=None, dtype=tf.uint32
    )
    halves = tf.reshape(tf.bitcast(words, tf.uint16), [-1])[:size]
    keep = tf.reshape(halves >= tf.constant(threshold, tf.uint16), tf.shape(inputs))
    scale = tf.cast(1.0 / (1.0 - rate), inputs.dtype)
    return tf.where(keep, inputs * scale, tf.zeros([], inputs.dtype))


def gelu(x):
    """Exact (erf) GELU, `x * Phi(x)`, with the closed-form gradient `Phi(x) + x * phi(x)`."""
    cdf = 0.5 * tf.math.erfc(x * tf.cast(-0.7071067811865476, x.dtype))

    def grad(upstream):
        density = tf.cast(0.3989422804014327, x.dtype) * tf.exp(x * x * tf.cast(-0.5, x.dtype))
        return upstream * (cdf + x * density)

    return x * cdf, grad


if tf is not None:
    gelu = keras.saving.register_keras_serializable(package="electra_tf")(tf.custom_gradient(gelu))
else:  # no TensorFlow: the name saved models use reads as Keras's exact GELU

    @keras.saving.register_keras_serializable(package="electra_tf", name="gelu")
    def gelu(x):  # noqa: F811
        """Exact (erf) GELU, Keras's."""
        return keras.activations.gelu(x, approximate=False)


class FastDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` with masks from `dropout` (two per 32-bit random word)."""

    def call(self, inputs, training=False):
        if not training or self.rate == 0 or self.noise_shape is not None:
            return super().call(inputs, training=training)
        seed = self.seed_generator.next()
        if seed.dtype != tf.int32:  # Keras keeps the state in int64; stateless ops want int32
            seed = tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32)
        return dropout(inputs, self.rate, seed)


class ProjectionDense(keras.layers.EinsumDense):
    """`keras.layers.EinsumDense` that runs `abc,cde->abde` and `abcd,cde->abe` as 2-D matmuls."""

    def call(self, inputs, training=None):
        axes = _MATMUL_AXES.get(self.equation)
        if axes is None or self.quantization_mode is not None:
            return super().call(inputs, training=training)
        x = tf.tensordot(inputs, tf.cast(self.kernel, inputs.dtype), axes=axes)
        if self.bias is not None:
            x = x + tf.cast(self.bias, x.dtype)
        if self.activation is not None:
            x = self.activation(x)
        return x


#: Innermost first: "auto" (decide from the CPU and ONEDNN_MAX_CPU_ISA), "wide" or "plain".
_LAYOUT = ["auto"]
_LAYOUTS = ("auto", "wide", "plain")


@functools.cache
def _cpu_flags(cpuinfo: str) -> frozenset:
    """The first processor's flags in `cpuinfo` (read once per path; empty: unknown)."""
    try:
        with open(cpuinfo) as handle:
            return frozenset(next((ln for ln in handle if ln.startswith("flags")), "").split())
    except OSError:
        return frozenset()


def _cpu_lacks_avx512(cpuinfo: str) -> bool:
    """Whether `cpuinfo` lists CPU flags without AVX-512."""
    flags = _cpu_flags(cpuinfo)
    return bool(flags) and not {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags


def cpu_has_bfloat16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether the CPU has bfloat16 instructions (AMX or AVX512_BF16); True when its flags
    cannot be read (another system: nothing to warn about)."""
    flags = _cpu_flags(cpuinfo)
    return not flags or bool({"amx_bf16", "avx512_bf16"} & flags)


def onednn_runs_avx2(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether oneDNN's fp32 matmuls run AVX2 kernels: capped by the environment, or no AVX-512."""
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", os.environ.get("DNNL_MAX_CPU_ISA", "")).upper()
    if cap.startswith(("AVX", "SSE")) and not cap.startswith(("AVX512", "AVX10")):
        return True  # AVX2, AVX2_VNNI, AVX, SSE41: a cap below AVX-512
    return _cpu_lacks_avx512(cpuinfo)


def narrow_and_wide(a: int, b: int) -> bool:
    """Whether one side is at most 256 and the other at least 1024 (ELECTRA-Small's 256, 1024).

    On such kernels oneDNN's AVX2 matmul runs some operand layouts at about half
    rate: the kernel gradient in training (`weight_gradient`), and the forward
    product at a few rows when the kernel widens its input (the serving graph).
    """
    return min(a, b) <= 256 and max(a, b) >= 1024


@contextlib.contextmanager
def gradient_layout(name: str):
    """Within this block, graphs traced use `weight_gradient` layout "auto", "wide" or "plain"."""
    if name not in _LAYOUTS:
        raise ValueError(f"gradient layout must be one of {_LAYOUTS}, got {name!r}.")
    _LAYOUT.append(name)
    try:
        yield
    finally:
        _LAYOUT.pop()


def wide_gradient_layout() -> bool:
    """Whether `weight_gradient` now uses its transposed forms ("auto": on oneDNN's AVX2)."""
    if _LAYOUT[-1] == "auto":
        return onednn_runs_avx2()
    return _LAYOUT[-1] == "wide"


def _materialized_transpose(x):
    """The transpose of a 2-D tensor, written out (grappler folds a bare one into the matmul)."""
    shape = tf.shape(x)
    return tf.reshape(tf.transpose(x[tf.newaxis], [0, 2, 1]), [shape[1], shape[0]])


def weight_gradient(x, upstream):
    """`x^T @ upstream` for `x` `[M, K]` and `upstream` `[M, N]`: a kernel's gradient, `[K, N]`.

    oneDNN's AVX2 matmul runs this product (transposed `x`, long `M`) at about half
    its forward rate when one of K, N is at most 256 and the other at least 1024,
    ELECTRA-Small's feed-forward shapes: 24 ms against 14 at M=4096, K=256,
    N=1024. There the wide operand is written out transposed first, which oneDNN
    multiplies at the forward rate (16 ms, transpose included). With AVX-512 the
    plain product is the fastest form, so `wide_gradient_layout()` decides.
    """
    k, n = x.shape[-1], upstream.shape[-1]
    if k and n and narrow_and_wide(k, n) and wide_gradient_layout():
        if k < n:
            return tf.matmul(
                x, _materialized_transpose(upstream), transpose_a=True, transpose_b=True
            )
        return tf.matmul(_materialized_transpose(x), upstream)
    return tf.matmul(x, upstream, transpose_a=True)


def matmul_2d(x, kernel):
    """`x @ kernel` for 2-D tensors, its kernel gradient from `weight_gradient`."""

    def grad(upstream):
        return tf.matmul(upstream, kernel, transpose_b=True), weight_gradient(x, upstream)

    return tf.matmul(x, kernel), grad


if tf is not None:
    matmul_2d = tf.custom_gradient(matmul_2d)


class FastDense(keras.layers.Dense):
    """`keras.layers.Dense` as one 2-D matmul whose kernel gradient comes from `weight_gradient`."""

    def call(self, inputs, training=None):
        if self.lora_enabled or self.quantization_mode is not None or inputs.shape.rank < 2:
            return super().call(inputs, training=training)
        units = self.units
        flat = tf.reshape(inputs, [-1, inputs.shape[-1]])
        x = matmul_2d(flat, tf.cast(self.kernel, flat.dtype))
        if self.bias is not None:
            x = tf.nn.bias_add(x, tf.cast(self.bias, x.dtype))
        if inputs.shape.rank != 2:
            x = tf.reshape(x, tf.concat([tf.shape(inputs)[:-1], [units]], 0))
            x.set_shape(inputs.shape[:-1].concatenate([units]))
        if self.activation is not None:
            x = self.activation(x)
        return x


class AdditiveMaskAttention(keras.layers.MultiHeadAttention):
    """`keras.layers.MultiHeadAttention` whose mask is added to the scores before the softmax.

    Keras selects a large negative number where the mask is 0, then selects 0 there again
    after the softmax: two passes over the `[B, heads, T, S]` scores forward and two in the
    gradient. Adding `(mask - 1) * 1e9` (-3e4 in float16) is one pass forward and none in
    the gradient, with the same probabilities wherever a query sees at least one key
    (exp underflows to exactly 0 at masked keys). A query that sees no key at all (an
    all-padding example) attends instead of seeing nothing, and nothing reads its
    output: evenly in float32 and bfloat16, where -1e9 absorbs any score, but not in
    float16, where the -3e4 is spaced 16 apart and absorbs only scores within 8 of each
    other, so such a row attends mostly to its largest scores.
    """

    def _masked_softmax(self, attention_scores, attention_mask=None):
        if attention_mask is None:
            return super()._masked_softmax(attention_scores, attention_mask)
        mask = tf.convert_to_tensor(attention_mask)
        axis = -len(self._attention_axes) * 2 - 1
        for _ in range(attention_scores.shape.rank - mask.shape.rank):
            mask = tf.expand_dims(mask, axis=axis)
        return self._softmax(attention_scores + mask_bias(mask, attention_scores.dtype))


def mask_bias(mask, dtype) -> tf.Tensor:
    """0 where `mask` is true (or above 0.5), Keras's large negative number elsewhere.

    The number is -1e9, or -3e4 in float16, as Keras's masked softmax uses; added to a
    score, it makes the score's probability exactly 0.
    """
    mask = tf.convert_to_tensor(mask)
    if mask.dtype != tf.bool:
        mask = mask > tf.cast(0.5, mask.dtype)
    large = -3e4 if dtype == tf.float16 else -1e9
    return tf.where(mask, tf.zeros([], dtype), tf.constant(large, dtype))


_FASTER = {
    keras.layers.MultiHeadAttention: AdditiveMaskAttention,
    keras.layers.Dropout: FastDropout,
    keras.layers.EinsumDense: ProjectionDense,
    keras.layers.Dense: FastDense,
}


@contextlib.contextmanager
def keras_kernels():
    """Within this block `speed_up` changes nothing and `gelu_activation` is Keras's "gelu"."""
    _ENABLED.append(False)
    try:
        yield
    finally:
        _ENABLED.pop()


def _faster_forms() -> bool:
    """Whether encoders built now take these forms: TensorFlow, outside `keras_kernels()`."""
    return _ENABLED[-1] and backend.tensorflow_fast_paths()


def gelu_activation():
    """The encoder's exact GELU: `gelu`, or Keras's own off TensorFlow or in `keras_kernels()`."""
    return gelu if _faster_forms() else "gelu"


def speed_up(layer) -> int:
    """Re-classes the plain Dropout, Dense, EinsumDense and MultiHeadAttention layers in `layer`
    (itself too); a count.

    Only exact instances change (a subclass keeps its own `call`), and only their
    `call`: weights, names and seed generators stay as they are. Inside
    `keras_kernels()` it changes nothing.
    """
    if not _faster_forms():
        return 0
    count = 0
    for sublayer in [layer, *layer._flatten_layers(include_self=False)]:
        faster = _FASTER.get(type(sublayer))
        if faster is not None:
            sublayer.__class__ = faster
            count += 1
    return count
