"""The discriminator as a SavedModel for TF Serving: id and raw-text signatures.

Layout: `DIR/<model_name>/<version>/` with `saved_model.pb`, `variables/`,
`assets/vocab.txt` and `assets.extra/tf_serving_warmup_requests`.

Signatures:

- `serving_default`: int32 `input_word_ids`, `input_mask`, `input_type_ids`
  `[batch, seq]` (seq up to the export's maximum) -> `rtd_logits` and
  `rtd_probabilities` `[batch, seq]` (replaced-token detection),
  `sequence_output` `[batch, seq, hidden]` and `pooled_output` `[batch, hidden]`
  (the [CLS] vector: ELECTRA has no pooler).
- `serve_text`: string `text` `[batch]` -> the same outputs plus the packed
  `input_word_ids`, `input_mask`, `input_type_ids` (`[batch, seq_length]`).
- `serve_text_pair`: string `text_a`, `text_b` `[batch]` -> the same, as
  `[CLS] A [SEP] B [SEP]` truncated longest-first.

The text signatures tokenize with tensorflow-text ops (the vocabulary is an
asset), so a server must have tensorflow-text's kernels: Python after
`import tensorflow_text`, or TF Serving's model server, which embeds
tensorflow-text 2.12.1 (the graph uses only ops that version registers). The
id signature needs only core TensorFlow.

The encoder and head run as `electra_tf.serving.inference` writes them for
the inference graph (the Keras layers' maths and weights; about 1.1x faster),
with a layer that widens a narrow input read from kernels stored transposed where oneDNN
runs AVX2 (`kernel_layout`, see `ServingModule`). `lanes=2` (`export --lanes 2`) writes each
block as two lanes run side by side on the inter-op threads instead, as the fine-tuned export
does by default; for the encoder it is an option (ELECTRA-Small at 128 tokens on 2 Intel
cores: 1.36x faster at batch 1, 0.99x at batch 32; docs/results/serving.md).
`jit_compile=True` (`electra-tf export --xla`) compiles them
with XLA inside each signature, the input checks staying outside it (XLA would drop them):
on 2 AVX2 cores about 1.12x faster at batch 1 and 1.05x slower at batch 32
(docs/results/performance.md); each new `[batch, seq]` shape compiles once,
and TF Serving runs it only when started with `--xla_cpu_compilation_enabled=true`.
"""

from __future__ import annotations

import os
from pathlib import Path

import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.data.inputs import pack_inputs
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.io.durable import publishing
from electra_tf.layers import kernels
from electra_tf.models.discriminator import ElectraDiscriminator
from electra_tf.serving import inference
from electra_tf.serving.id_checks import id_input_checks, one_dimensional_text
from electra_tf.serving.saved_model_assets import write_config_asset, write_warmup_requests

__all__ = [
    "ServingModule",
    "float32_discriminator",
    "export_for_serving",
    "write_warmup_requests",
    "write_config_asset",
    "ID_INPUTS",
    "KERNEL_LAYOUTS",
]

ID_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")

#: How the signatures are traced: without AutoGraph. Their code (tokenizer, packing, encoder)
#: branches and loops on Python values or through tf ops, so they answer the same; a Python
#: `if` or `while` on a tensor added later fails the trace instead of being converted.
#: Converting the whole call tree took about half of an export's time.
STAGED = {"autograph": False}
#: The exported signatures and the `ServingModule` methods behind them.
SIGNATURES = {
    "serving_default": "serve",
    "serve_text": "serve_text",
    "serve_text_pair": "serve_text_pair",
}
#: `ServingModule`'s `kernel_layout` choices.
KERNEL_LAYOUTS = ("auto", "transposed", "plain")
#: The encoder export's default lanes: one chain. Two lanes were 1.36x faster at batch 1 and
#: 0.99x at batch 32 (ELECTRA-Small, 128 tokens, 2 Intel cores), under the 1.0x its rule asked
#: there (docs/results/data/encoder-lanes-2026-11-29/RULE.md).
LANES = 1


def float32_discriminator(model) -> ElectraDiscriminator:
    """A float32 copy of the discriminator of a pretrainer (or of a discriminator)."""
    discriminator = getattr(model, "discriminator", model)
    config = discriminator.get_config()
    config.pop("name", None)
    copy = ElectraDiscriminator(dtype="float32", **config)
    copy.build()
    for target, source in zip(copy.weights, discriminator.weights, strict=True):
        target.assign(tf.cast(source, "float32"))
    return copy


def _serving_kernels(
    discriminator, keras_layers: bool, jit_compile: bool, kernel_layout: str, lanes: int = 1
):  # fmt: skip
    """(fused query/key/value kernels and biases, transposed feed-forward kernels, lanes'
    weights) as variables.

    The serving forward pass's query/key/value kernels side by side, made once from the
    discriminator's current weights: a call then reads them rather than concatenating three
    kernels per block (3-6% of a batch-1 call; the export grows by 3 H^2 per block). The
    same for the feed-forward kernels oneDNN's AVX2 matmul multiplies faster transposed
    (12.6 MB more for ELECTRA-Small). With `lanes` above 1, the lanes' weights
    (`inference.lane_weights`) alone. Empty lists where they do not apply.
    """
    encoder = discriminator.encoder
    if lanes > 1:
        return [], [], inference.lane_variables(encoder, lanes)
    fused = []
    if not keras_layers and inference.supports(discriminator):
        fused = [
            [tf.Variable(kernel, trainable=False), tf.Variable(bias, trainable=False)]
            for kernel, bias in inference.fused_qkv(discriminator.encoder)
        ]
    if kernel_layout == "auto":
        faster = kernels.onednn_runs_avx2() and not jit_compile
        kernel_layout = "transposed" if faster else "plain"
    transposed = []
    if fused and kernel_layout == "transposed" and inference.widens_narrow_input(encoder):
        transposed = [
            tf.Variable(kernel, trainable=False)
            for kernel in inference.transposed_wide_kernels(encoder)
        ]
    return fused, transposed, []


class ServingModule(tf.Module):
    """The exported object: a float32 discriminator, the tokenizer and the signatures.

    Args:
        discriminator: a float32 `ElectraDiscriminator`.
        tokenizer: an `ElectraTokenizer` (its vocabulary becomes an asset).
        seq_length: the text signatures' packed length.
        jit_compile: run the encoder and head as one XLA cluster (the checks stay outside).
        keras_layers: trace the Keras layers' own forward pass instead of
            `electra_tf.serving.inference`'s (the same outputs, slower; for comparison).
        kernel_layout: "transposed" stores a copy of each feed-forward intermediate
            kernel transposed where that layer widens a narrow input (ELECTRA-Small's
            256 -> 1024), which oneDNN's AVX2 matmul multiplies 1.7x faster at batch 1
            (on AVX-512 1.15x slower); "plain" does not; "auto" (the default) chooses
            "transposed" when this process's oneDNN runs AVX2 (`ONEDNN_MAX_CPU_ISA`
            below AVX-512, or a CPU without it) and XLA does not compile the pass
            (XLA's own matmul is 1.15x slower on it), in an export of one lane (the lanes
            read copies of their own). The outputs are the same.
        lanes: independent chains per encoder block, run side by side on the inter-op
            threads (`inference.resolve_lanes`); None: `LANES`, one. Refused above one with
            `jit_compile`, `keras_layers` or `kernel_layout="transposed"`.
    """

    def __init__(
        self,
        discriminator,
        tokenizer: ElectraTokenizer,
        seq_length: int = 128,
        jit_compile: bool = False,
        keras_layers: bool = False,
        kernel_layout: str = "auto",
        lanes: int | None = None,
    ):
        super().__init__(name="electra_serving")
        if kernel_layout not in KERNEL_LAYOUTS:
            raise ValueError(
                f"kernel_layout must be one of {KERNEL_LAYOUTS}, got {kernel_layout!r}."
            )
        self.discriminator = discriminator
        self._keras_layers = bool(keras_layers)
        # An explicit "transposed" layout asks for the one chain that reads it.
        one_chain = jit_compile or keras_layers or kernel_layout == "transposed"
        if one_chain and lanes not in (None, 1):
            raise ConfigError(
                f"lanes={lanes} applies to the plain SavedModel's own pass, not to an "
                "XLA-compiled, Keras-layers or transposed-kernel one; drop the lanes (or "
                "--xla / --kernel-layout transposed)."
            )
        one_chain = one_chain or not inference.supports(discriminator)
        self.lanes = inference.resolve_lanes(
            discriminator.encoder, 1 if one_chain else lanes, default=LANES
        )
        self.fused_attention_weights, self.transposed_wide_kernels, self.lane_weights = (
            _serving_kernels(discriminator, keras_layers, jit_compile, kernel_layout, self.lanes)
        )
        self.kernel_layout = "transposed" if self.transposed_wide_kernels else "plain"
        # The encoder's weights in `encoder.weights` order: their checkpoint keys are
        # `encoder_weights/<i>/...`, which `finetuning.initialization` reads back by position.
        self.encoder_weights = list(discriminator.encoder.weights)
        self.tokenizer = tokenizer
        self.max_sequence_length = int(discriminator.encoder.max_sequence_length)
        self.vocabulary_size = int(discriminator.encoder.vocabulary_size)
        self.seq_length = int(min(seq_length, self.max_sequence_length))
        # A nested jit-compiled function stays a call with `_XlaMustCompile` in the saved graph;
        # a plain Python method is traced inline into each signature.
        self._forward = (
            tf.function(self._encode, jit_compile=True, **STAGED) if jit_compile else self._encode
        )
        self.serve = tf.function(
            self._serve,
            input_signature=[tf.TensorSpec([None, None], tf.int32, name=n) for n in ID_INPUTS],
            **STAGED,
        )
        self.serve_text = tf.function(
            self._serve_text,
            input_signature=[tf.TensorSpec([None], tf.string, name="text")],
            **STAGED,
        )
        self.serve_text_pair = tf.function(
            self._serve_text_pair,
            input_signature=[
                tf.TensorSpec([None], tf.string, name="text_a"),
                tf.TensorSpec([None], tf.string, name="text_b"),
            ],
            **STAGED,
        )

    def _checks(self, input_word_ids, input_mask, input_type_ids):
        return id_input_checks(
            input_word_ids,
            input_mask,
            input_type_ids,
            max_length=self.max_sequence_length,
            vocabulary_size=self.vocabulary_size,
            num_segments=int(self.discriminator.encoder.num_segments),
        )

    def _outputs(self, input_word_ids, input_mask, input_type_ids):
        # Nothing reads an input before the checks pass (a bad segment id would otherwise
        # reach its embedding gather, whose error names no input).
        with tf.control_dependencies(self._checks(input_word_ids, input_mask, input_type_ids)):
            inputs = {
                "token_ids": tf.identity(input_word_ids),
                "padding_mask": tf.identity(input_mask),
                "segment_ids": tf.identity(input_type_ids),
            }
        return self._forward(inputs)

    def _encode(self, inputs):
        if not self._keras_layers and inference.supports(self.discriminator):
            return inference.discriminator_outputs(
                self.discriminator,
                inputs["token_ids"],
                inputs["padding_mask"],
                inputs["segment_ids"],
                self.fused_attention_weights or None,
                self.transposed_wide_kernels or None,
                lanes=self.lane_weights or None,
            )
        sequence = self.discriminator.encoder(inputs, training=False)
        logits = self.discriminator.rtd_head(sequence)
        return {
            "rtd_logits": logits,
            "rtd_probabilities": tf.sigmoid(logits),
            "sequence_output": sequence,
            "pooled_output": sequence[:, 0, :],
        }

    def _serve(self, input_word_ids, input_mask, input_type_ids):
        return self._outputs(input_word_ids, input_mask, input_type_ids)

    def _packed_outputs(self, packed):
        outputs = self._outputs(packed["token_ids"], packed["padding_mask"], packed["segment_ids"])
        outputs.update(
            input_word_ids=packed["token_ids"],
            input_mask=packed["padding_mask"],
            input_type_ids=packed["segment_ids"],
        )
        return outputs

    def _serve_text(self, text):
        tok = self.tokenizer
        text = one_dimensional_text(text, "text")
        packed = pack_inputs(
            tok.tokenize(text),
            sequence_length=self.seq_length,
            cls_id=tok.cls_id,
            sep_id=tok.sep_id,
            pad_id=tok.pad_id,
        )
        return self._packed_outputs(packed)

    def _serve_text_pair(self, text_a, text_b):
        tok = self.tokenizer
        same = tf.debugging.assert_equal(
            tf.shape(text_a),
            tf.shape(text_b),
            message="text_a and text_b must hold the same number of texts (one pair each)",
        )
        with tf.control_dependencies([same]):
            text_a, text_b = (
                one_dimensional_text(text_a, "text_a"),
                one_dimensional_text(text_b, "text_b"),
            )
        packed = pack_inputs(
            tok.tokenize(text_a),
            tok.tokenize(text_b),
            sequence_length=self.seq_length,
            cls_id=tok.cls_id,
            sep_id=tok.sep_id,
            pad_id=tok.pad_id,
        )
        return self._packed_outputs(packed)


def _need_vocabulary(vocab_file) -> None:
    if not vocab_file or not os.path.exists(vocab_file):
        from electra_tf.data.vocabulary import VocabularyError

        raise VocabularyError(
            f"The vocabulary {vocab_file!r} is needed for the text signatures but does not exist; "
            "pass --vocab-file."
        )


def export_for_serving(
    model,
    out_dir,
    *,
    vocab_file,
    model_name: str = "electra",
    version: int = 1,
    seq_length: int = 128,
    lower_case: bool = True,
    strip_accents: bool | None = None,
    warmup: bool = True,
    jit_compile: bool = False,
    keras_layers: bool = False,
    kernel_layout: str = "auto",
    lanes: int | None = None,
) -> Path:
    """Writes `out_dir/<model_name>/<version>/`, a SavedModel for TF Serving.

    Args:
        model: an `ElectraPretrainer` or `ElectraDiscriminator` (exported in float32).
        out_dir: the model base path TF Serving watches.
        vocab_file: the vocabulary (copied into the SavedModel as an asset).
        model_name, version: the TF Serving layout.
        seq_length: packed length of the text signatures.
        lower_case, strip_accents: the tokenizer's normalization.
        warmup: write `assets.extra/tf_serving_warmup_requests`.
        jit_compile, keras_layers, kernel_layout, lanes: see `ServingModule`.

    Returns:
        The version folder, written under a scratch name and renamed into place (synced);
        a failed write leaves nothing there.
    """
    _need_vocabulary(vocab_file)
    target = Path(out_dir) / model_name / str(version)
    discriminator = float32_discriminator(model)
    tokenizer = ElectraTokenizer(vocab_file, lower_case=lower_case, strip_accents=strip_accents)
    module = ServingModule(
        discriminator,
        tokenizer,
        seq_length=seq_length,
        jit_compile=jit_compile,
        keras_layers=keras_layers,
        kernel_layout=kernel_layout,
        lanes=lanes,
    )
    # The functions, not concrete functions traced here: saving traces them in its own
    # context (another cache key), so tracing first would trace every signature twice.
    signatures = {name: getattr(module, method) for name, method in SIGNATURES.items()}
    with publishing(target) as scratch:  # removed, with nothing half-written, on any error
        tf.saved_model.save(module, str(scratch), signatures=signatures)
        encoder, layout = discriminator.encoder, module.kernel_layout
        write_config_asset(
            scratch, "serving", encoder, lower_case, strip_accents, kernel_layout=layout,
            lanes=module.lanes,
        )  # fmt: skip
        if warmup:
            warmup_file = scratch / "assets.extra" / "tf_serving_warmup_requests"
            write_warmup_requests(
                warmup_file, model_name, module.seq_length, module.vocabulary_size
            )
    return target
