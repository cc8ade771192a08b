"""The ELECTRA math as small pure TensorFlow functions (no Keras, no state).

- `random`: counter-based uniforms, a pure function of (seed, step, stream, row, column);
- `masking`: candidate positions, how many to mask, which, and what they show;
- `sampling`: gather, scatter, Gumbel-max sampling and replaced-token labels;
- `losses`: the masked-LM and replaced-token-detection losses.
"""

from electra_tf.ops import losses, masking, random, sampling

__all__ = ["losses", "masking", "random", "sampling"]
