"""Fine-tuning models on the discriminator's encoder: classification, regression, spans."""

from __future__ import annotations

import keras
from keras import ops

from electra_tf.models.encoder import ElectraEncoder

__all__ = ["ElectraClassifier", "ElectraSpanExtractor"]


def _initializer(encoder):
    return keras.initializers.TruncatedNormal(stddev=encoder.initializer_range)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraClassifier(keras.Model):
    """[CLS] vector -> dropout -> one dense layer, as the reference's classification head.

    With `num_outputs=1` it is a regression model (the reference's STS head).

    Args:
        encoder: an `ElectraEncoder` (e.g. the pre-trained discriminator's).
        num_outputs: classes (or 1 for regression).
        dropout: dropout before the dense layer (0.1).

    Call arguments:
        inputs: dict of `token_ids`, `padding_mask`, `segment_ids` `[B, S]`.

    Returns:
        `[B, num_outputs]` logits, or `[B]` for regression.

    Example:

    >>> encoder = ElectraEncoder(vocabulary_size=20, num_layers=1, hidden_dim=8,
    ...     embedding_dim=8, num_heads=2, intermediate_dim=16, max_sequence_length=8)
    >>> classifier = ElectraClassifier(encoder, num_outputs=3)
    >>> ids = np.array([[2, 7, 8, 3]], "int32")
    >>> tuple(classifier({"token_ids": ids, "padding_mask": ids > 0,
    ...                   "segment_ids": 0 * ids}).shape)
    (1, 3)
    """

    def __init__(
        self,
        encoder: ElectraEncoder,
        num_outputs: int,
        dropout: float = 0.1,
        name="electra_classifier",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        self.encoder = encoder
        self.num_outputs = num_outputs
        self.dropout_rate = dropout
        self.dropout = keras.layers.Dropout(dropout, name="task_specific_dropout")
        self.output_dense = keras.layers.Dense(
            num_outputs, kernel_initializer=_initializer(encoder), name="task_specific_output"
        )

    def build(self, input_shape=None):
        if not self.encoder.built:
            self.encoder.build()
        self.output_dense.build((None, self.encoder.hidden_dim))
        self.built = True

    def call(self, inputs, training=None):
        sequence = self.encoder(inputs, training=training)
        pooled = self.dropout(sequence[:, 0, :], training=training)
        logits = self.output_dense(pooled)
        return ops.squeeze(logits, -1) if self.num_outputs == 1 else logits

    def get_config(self):
        return {
            "name": self.name,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "num_outputs": self.num_outputs,
            "dropout": self.dropout_rate,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)


@keras.saving.register_keras_serializable(package="electra_tf")
class ElectraSpanExtractor(keras.Model):
    """Start and end logits per token, plus an answerability logit on [CLS] (SQuAD 2.0).

    The reference's default head: dense(1) for start and end over the sequence.
    With `joint_end=True`, the end logits are conditioned on a start position
    (the reference's joint head): the end scorer sees
    `dense(gelu(dense([h_j; h_start])))` and is trained with the true start;
    at inference the top `beam_size` starts are each paired with their best
    ends (see `electra_tf.finetuning.squad.best_spans`).

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
        name="electra_span_extractor",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        self.encoder = encoder
        self.joint_end = joint_end
        self.beam_size = beam_size
        init = _initializer(encoder)
        self.start_dense = keras.layers.Dense(
            1, kernel_initializer=init, name="task_specific_start"
        )
        if joint_end:
            self.end_hidden = keras.layers.Dense(
                encoder.hidden_dim,
                activation="gelu",
                kernel_initializer=init,
                name="task_specific_end_hidden",
            )
        self.end_dense = keras.layers.Dense(1, kernel_initializer=init, name="task_specific_end")
        self.answer_hidden = keras.layers.Dense(
            encoder.hidden_dim,
            activation="gelu",
            kernel_initializer=init,
            name="task_specific_answer_hidden",
        )
        self.answer_dense = keras.layers.Dense(
            1, kernel_initializer=init, name="task_specific_answerable"
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
        beam = min(self.beam_size, sequence.shape[1] or self.beam_size)
        _, starts = ops.top_k(start_logits, beam)  # [B, K]
        ends = [self._end_logits(sequence, starts[:, k]) + penalty for k in range(beam)]
        outputs["end_logits"] = ops.stack(ends, axis=1)  # [B, K, S]
        outputs["start_candidates"] = starts
        return outputs

    def get_config(self):
        return {
            "name": self.name,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "joint_end": self.joint_end,
            "beam_size": self.beam_size,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        return cls(**config)
