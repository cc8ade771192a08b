"""`ElectraSpanExtractor`: start and end heads for extractive question answering (SQuAD)."""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.models.encoder import ElectraEncoder

__all__ = ["ElectraSpanExtractor"]


SPAN_HEAD_INITS = ("truncated_normal", "normal")


def _initializer(encoder, law: str = "truncated_normal"):
    """A new initializer (Keras gives an unseeded instance's same values at every call, so
    heads that shared one started equal: the start and end scorers were the same layer).
    `law`: "truncated_normal" (the reference code's, cut at 2 stddev) or "normal"
    (transformers' `BertForQuestionAnswering`), both at the encoder's initializer range."""
    if law not in SPAN_HEAD_INITS:
        raise ValueError(f'span_head_init must be "truncated_normal" or "normal", got {law!r}.')
    if law == "normal":
        return keras.initializers.RandomNormal(stddev=encoder.initializer_range)
    return keras.initializers.TruncatedNormal(stddev=encoder.initializer_range)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraSpanExtractor(keras.Model):
    """Start and end logits per token, plus an answerability logit on [CLS] (SQuAD 2.0).

    The reference's default head: dense(1) for start and end over the sequence.
    With `joint_end=True`, the end logits are conditioned on a start position
    (the reference's joint head): the end scorer sees
    `dense(gelu(dense([h_j; h_start])))` and is trained with the true start;
    at inference the top `beam_size` starts (every position of a shorter batch) are each
    paired with their best ends (see `electra_tf.datasets.squad.best_spans`).

    Call arguments:
        inputs: dict with `token_ids`, `padding_mask`, `segment_ids` and, for the
            joint head, `start_positions` `[B]` (true starts in training).

    Returns:
        dict with `start_logits` `[B, S]`, `end_logits` `[B, S]` (or `[B, K, S]` for
        the joint head at inference, K = beam size, with `start_candidates` `[B, K]`),
        and `answerable_logits` `[B]`.
    """

    def __init__(
        self,
        encoder: ElectraEncoder,
        joint_end: bool = False,
        beam_size: int = 20,
        span_head_init: str = "truncated_normal",
        name="electra_span_extractor",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        self.encoder = encoder
        self.joint_end = joint_end
        self.beam_size = beam_size
        self.span_head_init = span_head_init
        self.start_dense = keras.layers.Dense(
            1, kernel_initializer=_initializer(encoder, span_head_init), name="task_specific_start"
        )
        if joint_end:
            self.end_hidden = keras.layers.Dense(
                encoder.hidden_dim,
                activation="gelu",
                kernel_initializer=_initializer(encoder),
                name="task_specific_end_hidden",
            )
        self.end_dense = keras.layers.Dense(
            1, kernel_initializer=_initializer(encoder, span_head_init), name="task_specific_end"
        )
        self.answer_hidden = keras.layers.Dense(
            encoder.hidden_dim,
            activation="gelu",
            kernel_initializer=_initializer(encoder),
            name="task_specific_answer_hidden",
        )
        self.answer_dense = keras.layers.Dense(
            1, kernel_initializer=_initializer(encoder), name="task_specific_answerable"
        )

    def build(self, input_shape=None):
        if not self.encoder.built:
            self.encoder.build()
        hidden = self.encoder.hidden_dim
        self.start_dense.build((None, None, hidden))
        if self.joint_end:
            self.end_hidden.build((None, None, 2 * hidden))
        self.end_dense.build((None, None, hidden))
        self.answer_hidden.build((None, hidden))
        self.answer_dense.build((None, hidden))
        self.built = True

    def _end_logits(self, sequence, start_index):
        """End logits `[B, S]` given one start per example `[B]`."""
        start_vector = ops.take_along_axis(sequence, ops.reshape(start_index, (-1, 1, 1)), axis=1)
        start_vector = ops.broadcast_to(start_vector, ops.shape(sequence))
        features = self.end_hidden(ops.concatenate([sequence, start_vector], axis=-1))
        return ops.squeeze(self.end_dense(features), -1)

    def call(self, inputs, training=None):
        sequence = self.encoder(inputs, training=training)  # [B, S, H]
        mask = ops.cast(inputs["padding_mask"], sequence.dtype)
        penalty = (1.0 - mask) * -10000.0
        start_logits = ops.squeeze(self.start_dense(sequence), -1) + penalty
        answerable = ops.squeeze(self.answer_dense(self.answer_hidden(sequence[:, 0, :])), -1)
        outputs = {"start_logits": start_logits, "answerable_logits": answerable}
        if not self.joint_end:
            outputs["end_logits"] = ops.squeeze(self.end_dense(sequence), -1) + penalty
            return outputs
        if "start_positions" in inputs:
            outputs["end_logits"] = self._end_logits(sequence, inputs["start_positions"]) + penalty
            return outputs
        # The beam: the best `beam_size` starts (all of them in a shorter batch).
        beam = ops.minimum(self.beam_size, ops.shape(start_logits)[1])
        _, starts = ops.top_k(start_logits, beam)  # [B, K]
        outputs["end_logits"] = self.joint_end_logits(sequence, starts) + penalty[:, None, :]
        outputs["start_candidates"] = starts
        return outputs

    def joint_end_logits(self, sequence, starts):
        """End logits `[B, K, S]` given `[B, K]` starts each: `_end_logits` for all K at once
        (the end scorer's kernel split into its token half and its start half)."""
        hidden = ops.shape(sequence)[-1]
        index = ops.broadcast_to(starts[:, :, None], (*ops.shape(starts), hidden))
        start_vectors = ops.take_along_axis(sequence, index, axis=1)  # [B, K, H]
        kernel, half = self.end_hidden.kernel, self.encoder.hidden_dim
        tokens = ops.matmul(sequence, kernel[:half])[:, None, :, :]  # [B, 1, S, D]
        chosen = ops.matmul(start_vectors, kernel[half:])[:, :, None, :]  # [B, K, 1, D]
        features = self.end_hidden.activation(tokens + chosen + self.end_hidden.bias)
        return ops.squeeze(self.end_dense(features), -1)

    def get_config(self):
        return {
            "name": self.name,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "joint_end": self.joint_end,
            "beam_size": self.beam_size,
            "span_head_init": self.span_head_init,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)
