"""ELECTRA 15%: the discriminator's loss only at the masked positions (paper, Section 3.5).

Everything else is ELECTRA's step; the discriminator still reads the whole
corrupted sequence, but only the ~15% of positions the generator filled
count in its loss. The paper finds this loses most of ELECTRA's gain
(GLUE 82.4 against 85.0 at base size), showing that learning from all tokens
is what makes ELECTRA efficient.
"""

from __future__ import annotations

from keras import ops

from electra_tf.ops import sampling
from electra_tf.pretraining.objectives.electra import ElectraObjective

__all__ = ["Electra15Objective"]


class Electra15Objective(ElectraObjective):
    """ELECTRA with the discriminator loss restricted to the masked positions."""

    name = "electra_15"

    def discriminator_weights(self, padding_mask, masked):
        """1.0 at the used masked positions, 0 elsewhere (`[B, S]`)."""
        zeros = ops.zeros(ops.shape(padding_mask), "float32")
        return sampling.scatter_update(zeros, masked.weights, masked.positions, masked.weights)
