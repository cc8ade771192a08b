"""A fine-tuned model as one TF Serving SavedModel: raw text in, label names and probabilities out.

Layout: `DIR/<model_name>/<version>/` with `saved_model.pb`, `variables/`,
`assets/vocab.txt`, `assets.extra/electra_config.json` (the kind, the label
names, the encoder's config) and `assets.extra/tf_serving_warmup_requests`.

Signatures:

- `serving_default`: string `text` `[batch]` (and `text_pair` for pair tasks),
  tokenized and packed in the graph, ->
  - classification: `label` (the name, tf.string `[batch]`), `label_id`,
    `probabilities` `[batch, classes]` and `logits`;
  - multi-label: `labels` (tf.string `[batch, classes]`: the names whose
    probability is at least 0.5, in label order, then "" padding),
    `probabilities` and `logits`;
  - regression: `score` `[batch]`;
  - tagging: `words` (the text split on whitespace, tf.string `[batch, words]`,
    "" padding), `tags` (each word's tag, "" for padding and for words past the
    maximum length), `tag_ids` (-1 there) and `probabilities`
    `[batch, words, tags]`;
  - question answering: `question` and `context` in, `answer` (tf.string, "" for none),
    `start`, `end` (character offsets into the context), `score`, `no_answer` out
    (`electra_tf.tasks.kinds._answer_graph`).
- `serve`: Model Garden's id signature: int32 `input_word_ids`, `input_mask`,
  `input_type_ids` `[batch, seq]` -> `outputs` (the logits; per token for tagging; question
  answering: `start_logits`, `end_logits`, `answerable_logits`).
- `serve_examples`: Model Garden's: serialized `tf.Example`s with int64
  `input_word_ids`, `input_mask`, `input_type_ids` of `seq_length` values ->
  `outputs`.

The label names are constants in the graph. The encoder runs as
`electra_tf.serving.inference` writes it for the inference graph (the Keras
layers' weights and maths); the text is packed to the batch's longest input
(rounded up to 8), not to `seq_length`. Only ops that TF Serving's
tensorflow-text 2.12.1 registers are used, as in the encoder's export.

`jit_compile=True` (`electra-tf export RUN --xla`, recorded as `"xla": true` in
`electra_config.json`) compiles the encoder and head of every signature with XLA: one
call kept in the graph with `_XlaMustCompile`, the tokenizer, the input checks and the
string outputs around it uncompiled. Fewer, fused kernels per call (faster at batch 1);
each new `[batch, length]` compiles once (warm-up requests cover batch 1 and 8). A
consumer needs XLA's CPU JIT: Python's TensorFlow has it on (`tf.config.optimizer.set_jit(False)`
does not turn off a `jit_compile` function); TF Serving refuses to run it ("XLA
compilation disabled") unless started with `--xla_cpu_compilation_enabled=true`. The
plain export answers everywhere.

`bfloat16_rows=N` (`electra-tf export RUN --bfloat16`, recorded as `"bfloat16_rows"`) runs
the encoder's products, attention and GELU in bfloat16 for a call of at least N real
tokens (LayerNorm statistics, the head and the outputs stay float32), and the float32 pass
below N (N = 1, `export --bfloat16`'s: every call). The bfloat16 pass holds its weights as
bfloat16 constants in the graph, stored once, so oneDNN reorders them once instead of
every call. It is for CPUs with bfloat16 instructions (AMX or AVX512_BF16: 1.45x the
float32 export at batch 1 and 1.9x at 32 reviews on a 2-core Intel Xeon with AMX;
docs/results/serving.md); elsewhere TensorFlow emulates it slowly.

`lanes=L` (`electra-tf export RUN --lanes L`, recorded as `"lanes"`; default `LANES`, two,
where the heads and feed-forward units split evenly) writes each encoder block as L
independent chains (`inference.lane_weights`), which TensorFlow's inter-op threads run side
by side: a small call's products, each on one thread, then use L cores. Give the serving
process at least L inter-op threads (TensorFlow's and TF Serving's default is one per core;
on 2 cores 1 intra-op x 2 inter-op was fastest at batch 1 and 32). `lanes=1` is the single
chain. The XLA export compiles one chain (XLA schedules its own ops).
"""

from __future__ import annotations

import json
import tempfile
import types
from pathlib import Path

import keras
import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.data.inputs import pack_inputs
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.io.durable import ensure_space, os_reason, publishing, variables_bytes
from electra_tf.serving import inference
from electra_tf.serving.id_checks import id_input_checks, one_dimensional_text
from electra_tf.tasks.registry import get_kind
from electra_tf.tasks.serving_warmup import write_warmup

__all__ = ["require_tensorflow", "TaskServingModule", "export_finetuned"]

_IDS = ("input_word_ids", "input_mask", "input_type_ids")

#: How the serving signatures are traced: without AutoGraph. Their code (tokenizer, packing,
#: every kind's head and answer search) branches and loops on Python values or through tf ops,
#: so the signatures answer the same (the export tests compare them with the Keras model); a
#: Python `if` or `while` on a tensor added later fails the trace instead of being converted.
#: Converting the whole call tree was about half of an export's time (a one-layer toy: QA
#: 15 -> 6 CPU-s, classification 8 -> 4).
STAGED = {"autograph": False}

#: `export --bfloat16`'s default threshold: the real tokens of a call from which the encoder
#: runs in bfloat16; 1: every call. With its weights as graph constants, the bfloat16 export
#: of a MiniLM classifier was faster than the float32 one at every size measured on a 2-core
#: Intel Xeon with AMX: 1.3-1.7x at batch 1 from 8 to 128 tokens, 1.9x at 32 reviews
#: (docs/results/serving.md); with its weights cast per call it was level only at 256.
BFLOAT16_ROWS = 1

#: The plain export's default lanes (independent chains per encoder block): two cores' worth.
LANES = 2


class TaskServingModule(tf.Module):
    """The exported object of a fine-tuned text or token classifier (see the module docstring).

    Args:
        model: an `ElectraTextClassifier` or `ElectraTokenClassifier` (float32 weights).
        vocab_file: its vocabulary (becomes an asset).
        pair: whether `serving_default` takes `text_pair` too.
        seq_length: the longest packed input.
        skip_padding: run the per-token layers on the real tokens only (the default;
            `inference.encoder_sequence`'s `packed`); False computes every padded position.
        jit_compile: compile the encoder and head of every signature with XLA, as one call
            (`_XlaMustCompile`) between the uncompiled input checks, tokenizer and string
            outputs; it computes the padding (`skip_padding` is ignored) and gives the padding
            rows of per-token outputs the head on zeros, as the packed pass does. Each new
            `[batch, length]` compiles once; a consumer needs XLA's CPU JIT (TF Serving:
            `--xla_cpu_compilation_enabled=true`; without it every call fails).
        bfloat16_rows: from this many real tokens in a call, the encoder computes in bfloat16
            (see the module docstring); None: always float32.
        lanes: independent chains per encoder block (see the module docstring); None: `LANES`
            where they split the encoder evenly (else 1), 1 with `jit_compile`.
    """

    def __init__(
        self, model, vocab_file, pair: bool = False, seq_length: int = 128, skip_padding=True,
        jit_compile: bool = False, bfloat16_rows: int | None = None, lanes: int | None = None,
    ):  # fmt: skip
        super().__init__(name="electra_task_serving")
        self.kind = model.kind
        spec = get_kind(self.kind)
        if not spec.servable:
            raise ConfigError(f"A {self.kind} model cannot be exported yet.")
        self._spec = types.SimpleNamespace(kind=spec)  # a class, not state to save
        lanes = inference.resolve_lanes(model.encoder, lanes, jit_compile, default=LANES)
        self._hold_weights(model, spec, lanes)
        self.labels = tf.constant(getattr(model, "labels", None) or ["score"])
        self.tokenizer = ElectraTokenizer(
            vocab_file,
            lower_case=model.preprocessor.lower_case,
            strip_accents=model.preprocessor.strip_accents,
        )
        self.seq_length = int(min(seq_length, model.encoder.max_sequence_length))
        self.pair = bool(pair)
        self._set_passes(jit_compile, bfloat16_rows, skip_padding)
        # The kind's own serving settings (Python numbers: constants in the graph).
        self.settings = types.SimpleNamespace(**spec.serving_settings(model))
        text = spec.serving_inputs(self.pair)
        self.text_names = [t.name for t in text]
        # No AutoGraph (see `STAGED`): the signatures' loops and branches are tf ops already.
        self.serve_text = tf.function(self._serve_text, input_signature=text, **STAGED)
        ids = [tf.TensorSpec([None, None], tf.int32, name=name) for name in _IDS]
        self.serve = tf.function(self._serve_ids, input_signature=ids, **STAGED)
        examples = [tf.TensorSpec([None], tf.string, name="examples")]
        self.serve_examples = tf.function(self._serve_examples, input_signature=examples, **STAGED)

    def _hold_weights(self, model, spec, lanes: int) -> None:
        """The variables the SavedModel keeps, and `lanes` (blocks' lanes per pass)."""
        encoder = model.encoder
        # Keras objects in a namespace the SavedModel does not follow; their variables are
        # listed once below (`encoder_weights/<i>` is what `load_initialization` reads).
        self._keras = types.SimpleNamespace(
            encoder=encoder, head=getattr(model, "output_dense", None), model=model
        )
        self.encoder_weights = list(encoder.weights)
        self.head_weights = spec.head_weights(model)
        self.lanes = lanes
        # One chain reads the query, key and value kernels side by side; lanes read their
        # heads' share of them and of the feed-forward units (copies made once, here).
        self.fused_attention_weights = [
            [tf.Variable(kernel, trainable=False), tf.Variable(bias, trainable=False)]
            for kernel, bias in (inference.fused_qkv(encoder) if lanes == 1 else ())
        ]
        self.lane_weights = inference.lane_variables(encoder, lanes)

    def _set_passes(self, jit_compile: bool, bfloat16_rows, skip_padding: bool) -> None:
        """The encoder's passes: plain, under XLA, or in bfloat16 from `bfloat16_rows`."""
        self.jit_compile = bool(jit_compile)
        if bfloat16_rows is not None and (jit_compile or int(bfloat16_rows) < 1):
            raise ConfigError(
                "bfloat16_rows needs the plain export (not jit_compile) and a count of at "
                f"least 1 token (got {bfloat16_rows!r})."
            )
        self.bfloat16_rows = None if bfloat16_rows is None else int(bfloat16_rows)
        # The bfloat16 pass writes its weights into the graph as bfloat16 constants (oneDNN
        # then reorders them once, not per call); as one function the signatures call, the
        # SavedModel holds them once.
        ids = [tf.TensorSpec([None, None], tf.int32)] * 3
        self._bfloat16_pass = (
            None
            if self.bfloat16_rows is None
            else tf.function(self._bfloat16_encoded, input_signature=ids, **STAGED)
        )
        # XLA pads a data-dependent row count to its bound: packing would save nothing there
        # and make each shape compile 4x longer, so the compiled pass computes the padding.
        self.skip_padding = bool(skip_padding) and not self.jit_compile
        # A nested jit-compiled function stays a call with `_XlaMustCompile` in the saved graph
        # (the input checks before it, the tokenizer and string outputs around it, uncompiled);
        # a plain Python method is traced inline into each signature.
        self._forward = (
            tf.function(self._encode, jit_compile=True, **STAGED) if jit_compile else self._encode
        )

    @property
    def head_kernel(self):
        return self._keras.head.kernel

    @property
    def head_bias(self):
        return self._keras.head.bias

    def logits(self, token_ids, padding_mask, segment_ids):
        """The kind's head on the encoder: `[B, C]` ([CLS] head), `[B]` (regression) or
        `[B, S, C]` (per token)."""
        encoder = self._keras.encoder
        checks = id_input_checks(
            token_ids,
            padding_mask,
            segment_ids,
            max_length=int(encoder.max_sequence_length),
            vocabulary_size=int(encoder.vocabulary_size),
            num_segments=int(encoder.num_segments),
        )
        with tf.control_dependencies(checks):
            token_ids = tf.identity(token_ids)
        return self._forward(token_ids, padding_mask, segment_ids)

    def _encode(self, token_ids, padding_mask, segment_ids):
        """The encoder and the kind's head (compiled by XLA with `jit_compile`)."""
        shape = tf.shape(token_ids)
        ids = (token_ids, padding_mask, segment_ids)
        if self.bfloat16_rows is None:
            x = self._encoded(*ids)
        elif self.bfloat16_rows <= 1:
            x = self._bfloat16_pass(*ids)
        else:
            tokens = tf.math.count_nonzero(padding_mask, dtype=tf.int32)
            x = tf.cond(
                tokens >= self.bfloat16_rows,
                lambda: self._bfloat16_pass(*ids),
                lambda: self._encoded(*ids),
            )
        if self.jit_compile and not self._spec.kind.first_position_head:
            x = _padding_rows_zeroed(x, padding_mask)
        return self._spec.kind.head(self, x, shape, padding_mask=padding_mask)

    def _encoded(self, token_ids, padding_mask, segment_ids, dtype=tf.float32):
        """The encoder's output: `[B*S, H]` (padding rows are zeros), or `[B, H]` first
        positions for a kind whose head reads only them; float32 either way."""
        return inference.encoder_sequence(
            self._keras.encoder, token_ids, padding_mask, segment_ids,
            self.fused_attention_weights or None, packed=self.skip_padding,
            first_only=self._spec.kind.first_position_head, dtype=dtype,
            lanes=self.lane_weights or None,
            read=inference.as_constant,  # float32: the variables themselves
        )  # fmt: skip

    def _bfloat16_encoded(self, token_ids, padding_mask, segment_ids):
        """`_encoded` in bfloat16 (its weights as graph constants; see `__init__`)."""
        return self._encoded(token_ids, padding_mask, segment_ids, tf.bfloat16)

    def _serve_ids(self, input_word_ids, input_mask, input_type_ids):
        outputs = self.logits(input_word_ids, input_mask, input_type_ids)
        return outputs if isinstance(outputs, dict) else {"outputs": outputs}

    def _serve_examples(self, examples):
        spec = {name: tf.io.FixedLenFeature([self.seq_length], tf.int64) for name in _IDS}
        parsed = tf.io.parse_example(examples, spec)
        return self._serve_ids(*(tf.cast(parsed[name], tf.int32) for name in _IDS))

    def packed(self, text, text_pair=None):
        tok = self.tokenizer
        packed = pack_inputs(
            tok.tokenize(text),
            None if text_pair is None else tok.tokenize(text_pair),
            sequence_length=self.seq_length,
            cls_id=tok.cls_id,
            sep_id=tok.sep_id,
            pad_id=tok.pad_id,
        )
        longest = tf.reduce_max(tf.reduce_sum(packed["padding_mask"], axis=1))
        width = tf.minimum(self.seq_length, (tf.maximum(longest, 1) + 7) // 8 * 8)
        return [packed[name][:, :width] for name in ("token_ids", "padding_mask", "segment_ids")]

    def _serve_text(self, text, text_pair=None):
        text = one_dimensional_text(text, "text")
        if text_pair is not None:
            text_pair = one_dimensional_text(text_pair, "text_pair")
            same = tf.debugging.assert_equal(
                tf.shape(text),
                tf.shape(text_pair),
                message="text and text_pair must hold the same number of texts (one pair each)",
            )
            with tf.control_dependencies([same]):
                text = tf.identity(text)
        return self._spec.kind.serve(self, text, text_pair)


def _padding_rows_zeroed(x, padding_mask):
    """`[B*S, H]` rows with the padding rows (those `inference.rows_kept` leaves out) set to
    zeros, as a packed pass leaves them: the per-token outputs of padding then equal the
    packed export's (the head on zeros)."""
    mask = tf.convert_to_tensor(padding_mask)
    keep = mask if mask.dtype == tf.bool else tf.cast(mask, tf.float32) > 0.5
    keep = tf.logical_or(keep, tf.equal(tf.range(tf.shape(mask)[1]), 0)[None, :])
    return x * tf.cast(tf.reshape(keep, [-1, 1]), x.dtype)


def require_tensorflow(what: str) -> None:
    """Refuses, in one sentence, to write `what` (a TensorFlow format) where Keras runs on
    another backend, whose weights TensorFlow's graph cannot take."""
    backend = keras.config.backend()
    if backend != "tensorflow":
        raise ConfigError(
            f"{what} is written on TensorFlow, and Keras runs on {backend} here; save the "
            "model (model.save('model.keras')), then load and export it in a process with "
            "KERAS_BACKEND=tensorflow."
        )


def export_finetuned(
    model, info: dict, out_dir, *, model_name: str = "classifier", version: int = 1,
    seq_length: int | None = None, warmup: bool = True, jit_compile: bool = False,
    bfloat16_rows: int | None = None, lanes: int | None = None,
) -> Path:  # fmt: skip
    """Writes `out_dir/<model_name>/<version>/`, the fine-tuned model as a SavedModel.

    Args:
        model: a fine-tuned `ElectraTextClassifier` or `ElectraTokenClassifier`.
        info: its `finetuned.json` (kind, labels, pair, ...).
        out_dir: the model base path TF Serving watches.
        model_name, version: the TF Serving layout.
        seq_length: the longest packed input (default: the model's preprocessor's).
        warmup: write TF Serving's warm-up requests.
        jit_compile: the encoder and head under XLA (`TaskServingModule`; `export --xla`).
        bfloat16_rows: the encoder in bfloat16 from this many real tokens in a call
            (`TaskServingModule`; `export --bfloat16` gives `BFLOAT16_ROWS`).
        lanes: independent chains per encoder block (`TaskServingModule`; `export --lanes`).

    Returns:
        The version folder. Nothing is left behind when writing fails.
    """
    require_tensorflow("A SavedModel")
    target = Path(out_dir) / model_name / str(version)
    seq_length = seq_length or model.preprocessor.sequence_length
    with tempfile.TemporaryDirectory() as folder:
        vocab = Path(folder) / "vocab.txt"
        vocab.write_text("".join(f"{t}\n" for t in model.preprocessor.vocabulary), "utf-8")
        module = TaskServingModule(
            model, vocab, pair=info.get("pair", False), seq_length=seq_length,
            jit_compile=jit_compile, bfloat16_rows=bfloat16_rows, lanes=lanes,
        )  # fmt: skip
        try:
            # TensorFlow's SaveV2 on a full disk says only its internals: check first.
            ensure_space(target.parent, variables_bytes([*model.weights, *module.variables]))
            with publishing(target) as scratch:
                _write(module, model, info, scratch, model_name, warmup)
        except (OSError, tf.errors.OpError) as error:
            raise ConfigError(
                f"Could not write the export into {target.parent} ({os_reason(error)}); free "
                "space or choose a writable --out. Nothing was left there."
            ) from None
    return target


def _write(module: TaskServingModule, model, info: dict, folder: Path, model_name, warmup):
    """The SavedModel, its config asset and warm-up requests, into `folder`."""
    # The functions themselves, not concrete functions traced beforehand: saving traces in
    # its own context (another cache key), so each signature would be traced twice.
    signatures = {
        "serving_default": module.serve_text,
        "serve": module.serve,
        "serve_examples": module.serve_examples,
    }
    tf.saved_model.save(module, str(folder), signatures=signatures)
    encoder = model.encoder.get_config()
    encoder.pop("name", None)
    config = {
        "kind": "finetuned",
        "task_kind": module.kind,
        "labels": getattr(model, "labels", []),
        "pair": module.pair,
        "seq_length": module.seq_length,
        # XLA-compiled encoder and head: TF Serving needs --xla_cpu_compilation_enabled=true
        "xla": module.jit_compile,
        # bfloat16 encoder from this many real tokens a call (None: float32 only)
        "bfloat16_rows": module.bfloat16_rows,
        # independent chains per encoder block: give the server at least this many inter-op
        # threads
        "lanes": module.lanes,
        "encoder": encoder,
        "lower_case": module.tokenizer.lower_case,
        "strip_accents": module.tokenizer.strip_accents,
        **{key: info.get(key) for key in ("task", "selected_by", "columns")},
    }
    extra = folder / "assets.extra"
    extra.mkdir(parents=True, exist_ok=True)
    (extra / "electra_config.json").write_text(json.dumps(config, indent=2) + "\n")
    if warmup:
        write_warmup(extra / "tf_serving_warmup_requests", module, model_name, _IDS)
