"""An encoder block as independent chains ("lanes") for the serving graph: the weights.

Lane `j` of `L` holds heads `j*n .. (j+1)*n - 1` (their query, key and value columns, their
attention, their rows of the output projection) and the feed-forward units
`j*m .. (j+1)*m - 1` (their columns of the widening kernel, their GELU, their rows of the
narrowing kernel); the lanes join where the block adds its residual
(`inference.encoder_sequence(lanes=)`), so TensorFlow's inter-op threads run them side by
side. Here: whether `L` splits an encoder (`lanes_fit`), an export's lanes checked or
defaulted (`resolve_lanes`), and the lanes' column copies, made once (`lane_weights`; as an
export module's variables, `lane_variables`).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

__all__ = ["lanes_fit", "resolve_lanes", "lane_weights", "lane_variables"]


def lanes_fit(encoder, lanes: int) -> bool:
    """Whether `lanes` chains split this encoder's heads and feed-forward units evenly."""
    lanes = int(lanes)
    heads, intermediate = encoder.num_heads, encoder.intermediate_dim
    return lanes >= 1 and heads % lanes == 0 and intermediate % lanes == 0


def resolve_lanes(encoder, lanes, jit_compile: bool = False, default: int = 2) -> int:
    """An export's lanes: `lanes` checked (a whole number that splits the heads and units; 1
    under XLA, which schedules its own ops), or for None `default` where it fits, else 1."""
    from electra_tf.config import ConfigError

    if lanes is None:
        return 1 if jit_compile or not lanes_fit(encoder, default) else int(default)
    if isinstance(lanes, bool) or not isinstance(lanes, int | np.integer) or lanes < 1:
        raise ConfigError(f"lanes must be a whole number of at least 1 (got {lanes!r}).")
    if jit_compile and lanes > 1:
        raise ConfigError(
            f"lanes={lanes} applies to the plain SavedModel; the XLA-compiled one runs one "
            "chain (XLA schedules its own ops): drop the lanes or jit_compile."
        )
    if not lanes_fit(encoder, lanes):
        raise ConfigError(
            f"lanes={lanes} does not split this encoder's {encoder.num_heads} heads and "
            f"{encoder.intermediate_dim} feed-forward units evenly; choose a divisor of both."
        )
    return int(lanes)


def lane_weights(encoder, lanes: int) -> list:
    """Per block, per lane `j` of `lanes`: the query, key and value kernels of its heads side by
    side `[H, 3H/L]`, their biases `[3H/L]`, and its share of the feed-forward units' kernel
    `[H, I/L]` and biases `[I/L]` (copies: column slices). The lanes read the attention output's
    and the feed-forward output's kernels as row slices of the layers' own (no copy)."""
    if not lanes_fit(encoder, lanes):
        raise ValueError(
            f"{lanes} lanes do not split {encoder.num_heads} heads and "
            f"{encoder.intermediate_dim} feed-forward units evenly."
        )
    hidden, share = encoder.hidden_dim, encoder.hidden_dim // lanes
    units = encoder.intermediate_dim // lanes
    weights = []
    for layer in encoder.transformer_layers:
        attention = layer._self_attention_layer
        projections = (attention._query_dense, attention._key_dense, attention._value_dense)
        kernels_ = [tf.reshape(p.kernel, [hidden, hidden]) for p in projections]
        biases = [tf.reshape(p.bias, [hidden]) for p in projections]
        intermediate = layer._feedforward_intermediate_dense
        block = []
        for j in range(lanes):
            heads_, units_ = slice(j * share, (j + 1) * share), slice(j * units, (j + 1) * units)
            block.append((
                tf.concat([k[:, heads_] for k in kernels_], 1),
                tf.concat([b[heads_] for b in biases], 0),
                intermediate.kernel[:, units_],
                intermediate.bias[units_],
            ))  # fmt: skip
        weights.append(block)
    return weights


def lane_variables(encoder, lanes: int) -> list:
    """`lane_weights` as non-trainable variables (an export module's, saved with it); an empty
    list for one lane, which reads no copies of these."""
    if lanes == 1:
        return []
    return [
        [[tf.Variable(w, trainable=False) for w in lane] for lane in block]
        for block in lane_weights(encoder, lanes)
    ]
