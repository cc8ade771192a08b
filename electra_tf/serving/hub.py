"""A TF-Hub-style encoder and preprocessor pair, in the convention of TF-Hub's BERT/ELECTRA models.

Encoder (`DIR/encoder/`): call it with a dict of int32 `input_word_ids`,
`input_mask`, `input_type_ids` `[batch, seq]`; it returns `pooled_output`
(the [CLS] vector), `sequence_output`, `encoder_outputs` (one per layer) and
`default` (= `pooled_output`). The `serve` endpoint takes the same dict
(for `keras.layers.TFSMLayer(path, call_endpoint="serve")`), and the
`serving_default` signature the same tensors by name. `__call__` is traced for `training=True` and
`False`, and the object carries `variables`, `trainable_variables` and
`regularization_losses`, so `hub.KerasLayer(path, trainable=True)` fine-tunes
it. `.mlm` (when exported with the generator) adds `masked_lm_positions` to
the inputs and returns the generator's `mlm_logits` there. The encoder holds
no tensorflow-text ops: it loads anywhere TensorFlow does.

Preprocessor (`DIR/preprocessor/`): call it on a batch of strings for the
three inputs at `seq_length` 128; `.tokenize(strings)` gives int32 ragged
`[batch, words, pieces]`; `.bert_pack_inputs([segments], seq_length)` packs
one or two tokenized segments as `[CLS] A [SEP] B [SEP]`, trimmed to fit
(round-robin, which for two segments keeps the same lengths as BERT's
longest-first). It needs `import tensorflow_text` before loading.
"""

from __future__ import annotations

import types
from pathlib import Path

import tensorflow as tf

from electra_tf.data.inputs import pack_inputs
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.io.durable import publishing
from electra_tf.models.generator import ElectraGenerator
from electra_tf.serving.saved_model import (
    ID_INPUTS,
    STAGED,
    float32_discriminator,
    write_config_asset,
)

__all__ = ["HubEncoder", "HubPreprocessor", "export_hub"]

_INPUT_SPEC = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in ID_INPUTS}
AutoTrackable = tf.__internal__.tracking.AutoTrackable


def _inputs(inputs):
    return {
        "token_ids": inputs["input_word_ids"],
        "padding_mask": inputs["input_mask"],
        "segment_ids": inputs["input_type_ids"],
    }


class _HubMlm(AutoTrackable):
    def __init__(self, generator):
        self._keras = types.SimpleNamespace(generator=generator)  # not saved: see HubEncoder
        self.__call__ = tf.function(self._forward, **STAGED)
        spec = {
            **_INPUT_SPEC,
            "masked_lm_positions": tf.TensorSpec(
                [None, None], tf.int32, name="masked_lm_positions"
            ),
        }
        for training in (False, True):
            self.__call__.get_concrete_function(spec, training=training)

    def _forward(self, inputs, training=False):
        features = {**_inputs(inputs), "mask_positions": inputs["masked_lm_positions"]}
        generator = self._keras.generator
        sequence = generator.encoder(features, training=training)
        logits = generator.mlm_head(sequence, mask_positions=inputs["masked_lm_positions"])
        return {"mlm_logits": logits, "sequence_output": sequence}


class HubEncoder(AutoTrackable):
    """The discriminator's encoder in TF-Hub's calling convention (see the module docstring)."""

    @property
    def encoder(self):
        return self._keras.encoder

    def __init__(self, discriminator, generator=None):
        # The Keras models sit in a plain namespace, which the SavedModel does not follow: their
        # variables are saved once, as the `tf.Variable`s listed under `encoder_weights` and
        # `variables` (which `hub.KerasLayer` needs), not a second time as Keras variables.
        self._keras = types.SimpleNamespace(encoder=discriminator.encoder)
        self.encoder_weights = [w.value for w in self.encoder.weights]  # see ServingModule
        # `variables` (unlike Keras's `weights`) includes the dropout seed-generator states,
        # which the training=True trace reads and assigns.
        keras_variables = list(self.encoder.variables)
        if generator is not None:
            keras_variables += [
                v for v in generator.variables if all(v is not w for w in keras_variables)
            ]
            self.mlm = _HubMlm(generator)
        self.variables = [v.value for v in keras_variables]
        self.trainable_variables = [v.value for v in keras_variables if v.trainable]
        self.regularization_losses = []
        self.__call__ = tf.function(self._forward, **STAGED)
        for training in (False, True):
            self.__call__.get_concrete_function(_INPUT_SPEC, training=training)
        self.serving = tf.function(self._signature, input_signature=[_INPUT_SPEC], **STAGED)
        # Keras 3's TFSMLayer passes one dict positionally: `call_endpoint="serve"`.
        self.serve = tf.function(self._signature, input_signature=[_INPUT_SPEC], **STAGED)

    def _signature(self, inputs):
        """The `serving_default` signature: lists are not allowed there, so the per-layer
        outputs are `encoder_outputs_0` ... `encoder_outputs_{L-1}`."""
        outputs = self._forward(inputs, training=False)
        layers = outputs.pop("encoder_outputs")
        outputs.update({f"encoder_outputs_{i}": x for i, x in enumerate(layers)})
        return outputs

    def _forward(self, inputs, training=False):
        layers = self.encoder(_inputs(inputs), training=training, return_all_layers=True)
        pooled = layers[-1][:, 0, :]
        return {
            "pooled_output": pooled,
            "sequence_output": layers[-1],
            "encoder_outputs": layers,
            "default": pooled,
        }


class HubPreprocessor(AutoTrackable):
    """Text to encoder inputs with the package's tokenizer (see the module docstring)."""

    def __init__(self, tokenizer: ElectraTokenizer, seq_length: int = 128):
        self.tokenizer = tokenizer
        self.seq_length = seq_length
        self.__call__ = tf.function(
            self._preprocess, input_signature=[tf.TensorSpec([None], tf.string)], **STAGED
        )
        self.tokenize = tf.function(
            self._tokenize, input_signature=[tf.TensorSpec([None], tf.string)], **STAGED
        )
        self.bert_pack_inputs = tf.function(self._pack, **STAGED)
        length = tf.TensorSpec([], tf.int32)
        words = tf.RaggedTensorSpec([None, None, None], tf.int32, ragged_rank=2)
        for count in (1, 2):
            self.bert_pack_inputs.get_concrete_function([words] * count, length)
            self.bert_pack_inputs.get_concrete_function([words] * count, seq_length=length)

    def _tokenize(self, texts):
        return tf.cast(self.tokenizer.tokenize_words(texts), tf.int32)

    def _pack(self, inputs, seq_length=128):
        tok = self.tokenizer
        segments = [s.merge_dims(-2, -1) if s.ragged_rank == 2 else s for s in inputs]
        packed = pack_inputs(
            *segments,
            sequence_length=seq_length,
            cls_id=tok.cls_id,
            sep_id=tok.sep_id,
            pad_id=tok.pad_id,
        )
        return {
            "input_word_ids": packed["token_ids"],
            "input_mask": packed["padding_mask"],
            "input_type_ids": packed["segment_ids"],
        }

    def _preprocess(self, texts):
        return self._pack([self._tokenize(texts)], seq_length=self.seq_length)


def _save(obj, folder: Path, signatures, config=None):
    with publishing(folder) as scratch:  # synced and renamed into place; removed on error
        tf.saved_model.save(obj, str(scratch), signatures=signatures)
        if config is not None:
            write_config_asset(scratch, *config)


def export_hub(
    model,
    out_dir,
    *,
    vocab_file,
    seq_length: int = 128,
    lower_case: bool = True,
    strip_accents: bool | None = None,
    with_mlm: bool = True,
) -> tuple[Path, Path]:
    """Writes `out_dir/encoder` and `out_dir/preprocessor`.

    Args:
        model: an `ElectraPretrainer` (the generator then backs `.mlm` if
            `with_mlm`) or an `ElectraDiscriminator`.
        vocab_file: the vocabulary for the preprocessor.

    Returns:
        (encoder folder, preprocessor folder).
    """
    out_dir = Path(out_dir)
    discriminator = float32_discriminator(model)
    generator = None
    if with_mlm and getattr(model, "generator", None) is not None:
        source = model.generator
        config = source.encoder.get_config()
        config.pop("name", None)
        generator = ElectraGenerator(dtype="float32", **config)
        generator.build()
        for target, value in zip(generator.weights, source.weights, strict=True):
            target.assign(tf.cast(value, "float32"))
    encoder = HubEncoder(discriminator, generator)
    _save(
        encoder,
        out_dir / "encoder",
        {"serving_default": encoder.serving.get_concrete_function()},
        config=("hub", discriminator.encoder, lower_case, strip_accents),
    )
    preprocessor = HubPreprocessor(
        ElectraTokenizer(vocab_file, lower_case=lower_case, strip_accents=strip_accents),
        seq_length=seq_length,
    )
    _save(
        preprocessor,
        out_dir / "preprocessor",
        {"serving_default": preprocessor.__call__.get_concrete_function()},
    )
    return out_dir / "encoder", out_dir / "preprocessor"
