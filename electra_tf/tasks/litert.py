"""A fine-tuned text classifier as one LiteRT (TensorFlow Lite) flatbuffer: raw text in, labels out.

`export_litert` writes `DIR/<model_name>/model.tflite`, with `electra_config.json`
(the kind, labels, quantization and measured quality) and `vocab.txt` beside it.
The flatbuffer holds the whole path of the SavedModel's `serving_default`:
tensorflow-text's `FastBertTokenizer` (its normalizer and WordPiece run as LiteRT
custom ops that `tensorflow_text.tflite_registrar` registers), the packing of
`electra_tf.data.inputs`, the encoder as `electra_tf.serving.inference` writes it
(with LiteRT's builtin GELU) and the kind's head and outputs (`label`, `label_id`,
`probabilities`, `logits`; multi-label `labels`; regression `score`).

`quantize="int8"` is LiteRT's dynamic-range quantization: weights stored as int8,
matmuls on int8 with activations quantized per call (the counterpart of ONNX
Runtime's `quantize_dynamic`); no calibration data is needed.

`open_litert(folder)` loads the flatbuffer with the tensorflow-text ops and gives
a callable with the SavedModel signature's inputs and outputs.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import numpy as np
import tensorflow as tf

from electra_tf.config import ConfigError
from electra_tf.data.inputs import pack_inputs
from electra_tf.io.durable import os_reason, publishing
from electra_tf.serving import inference
from electra_tf.tasks import litert_quality
from electra_tf.tasks.export import STAGED, TaskServingModule, require_tensorflow
from electra_tf.tasks.registry import get_kind

__all__ = ["LITERT_FILE", "LiteTextModule", "export_litert", "open_config", "open_litert"]

LITERT_FILE = "model.tflite"
QUANTIZE = (None, "int8")


class LiteTextModule(tf.Module):
    """What the flatbuffer computes, as a `tf.Module` the LiteRT converter reads.

    Args:
        model: a fine-tuned `ElectraTextClassifier` (classification, multi-label, regression).
        pair: whether the model reads text pairs.
        seq_length: the longest packed input.
        skip_padding: run the per-token layers on the real tokens only (the default;
            `inference.encoder_sequence`'s `packed`); False computes every padded position.
    """

    def __init__(self, model, pair: bool = False, seq_length: int = 128, skip_padding=True):
        import tensorflow_text as tf_text

        super().__init__(name="electra_litert")
        spec = get_kind(model.kind)
        if not spec.litert:
            raise ConfigError(
                f"A {model.kind} model has no LiteRT export yet; export it with --format serving."
            )
        pre = model.preprocessor
        if bool(pre.lower_case) != bool(pre.strip_accents):
            raise ConfigError(
                "LiteRT's tokenizer folds case and strips accents together or not at all; this "
                f"model has lower_case={pre.lower_case} and strip_accents={pre.strip_accents}, "
                "so export it with --format serving."
            )
        self._spec = types.SimpleNamespace(kind=spec)
        self._keras = types.SimpleNamespace(encoder=model.encoder, head=model.output_dense)
        # Tracked: without them the converter writes the flatbuffer with no signature.
        self.model_weights = list(model.encoder.weights) + list(model.output_dense.weights)
        vocabulary = list(pre.vocabulary)
        self.special = {t: vocabulary.index(t) for t in ("[CLS]", "[SEP]", "[PAD]")}
        self.tokenizer = tf_text.FastBertTokenizer(
            vocab=vocabulary, token_out_type=tf.int32, unknown_token="[UNK]",
            lower_case_nfd_strip_accents=bool(pre.lower_case),
        )  # fmt: skip
        self.fused = [
            (tf.constant(kernel), tf.constant(bias))
            for kernel, bias in inference.fused_qkv(model.encoder)
        ]
        self.labels = tf.constant(getattr(model, "labels", None) or ["score"])
        self.seq_length = int(min(seq_length, model.encoder.max_sequence_length))
        self.pair = bool(pair)
        self.skip_padding = bool(skip_padding)
        self.settings = types.SimpleNamespace(**spec.serving_settings(model))
        self.text_names = [t.name for t in spec.serving_inputs(self.pair)]
        self.serve_text = tf.function(
            self._serve_text, input_signature=spec.serving_inputs(self.pair), **STAGED
        )

    head_kernel = TaskServingModule.head_kernel  # the Keras head's, as the SavedModel reads
    head_bias = TaskServingModule.head_bias

    def packed(self, text, text_pair=None):
        packed = pack_inputs(
            self.tokenizer.tokenize(text),
            None if text_pair is None else self.tokenizer.tokenize(text_pair),
            sequence_length=self.seq_length,
            cls_id=self.special["[CLS]"],
            sep_id=self.special["[SEP]"],
            pad_id=self.special["[PAD]"],
        )
        width = tf.maximum(tf.reduce_max(tf.reduce_sum(packed["padding_mask"], axis=1)), 1)
        return [packed[name][:, :width] for name in ("token_ids", "padding_mask", "segment_ids")]

    def logits(self, token_ids, padding_mask, segment_ids):
        encoder = self._keras.encoder
        x = inference.encoder_sequence(
            encoder, token_ids, padding_mask, segment_ids, self.fused, litert=True,
            packed=self.skip_padding, first_only=self._spec.kind.first_position_head,
        )  # fmt: skip
        return self._spec.kind.head(self, x, tf.shape(token_ids), padding_mask=padding_mask)

    def _serve_text(self, text, text_pair=None):
        return self._spec.kind.serve(self, text, text_pair)


def convert(module: LiteTextModule, quantize: str | None = None) -> tuple[bytes, list[str]]:
    """The module's `serve_text` as LiteRT flatbuffer bytes (`quantize`: None or "int8"), and
    its output names in the flatbuffer's order (it calls them `output_0`, `output_1`, ...)."""
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2,
    )

    if quantize not in QUANTIZE:
        raise ConfigError(f"--quantize must be one of none, int8 (not {quantize!r}).")
    function = module.serve_text.get_concrete_function()
    names = sorted(function.structured_outputs)  # tf.nest's order of a dict's values
    # Weights as constants: a SavedModel's variables would stay LiteRT resource variables.
    frozen = convert_variables_to_constants_v2(function)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([frozen], module)
    converter.allow_custom_ops = True  # tensorflow-text's tokenizer kernels
    if quantize == "int8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return converter.convert(), names


class LiteRTPredictor:
    """The flatbuffer as a callable: `(texts, pairs=None) -> outputs dict` of numpy arrays."""

    def __init__(self, path, inputs: list[str], outputs: list[str], num_threads=None):
        import tensorflow_text as tf_text
        from ai_edge_litert.interpreter import InterpreterWithCustomOps  # LiteRT's runtime

        self.interpreter = InterpreterWithCustomOps(
            model_path=str(path), num_threads=num_threads,
            custom_op_registerers=tf_text.tflite_registrar.SELECT_TFTEXT_OPS,
        )  # fmt: skip
        self.runner = self.interpreter.get_signature_runner()
        self.names = list(inputs)  # text, then text_pair
        self.outputs = {f"output_{i}": name for i, name in enumerate(outputs)}

    def __call__(self, texts, pairs=None) -> dict:
        inputs = {self.names[0]: np.asarray(list(texts), dtype=object)}
        if pairs is not None:
            inputs[self.names[1]] = np.asarray(list(pairs), dtype=object)
        return {self.outputs.get(k, k): v for k, v in self.runner(**inputs).items()}


def open_config(folder) -> dict:
    """The `electra_config.json` of a LiteRT export folder."""
    return json.loads((Path(folder) / "electra_config.json").read_text())


def open_litert(folder, num_threads: int | None = None):
    """(predictor, config) of an export folder holding `model.tflite`."""
    folder = Path(folder)
    config = open_config(folder)
    names = config["inputs"], config["outputs"]
    predictor = LiteRTPredictor(folder / LITERT_FILE, *names, num_threads=num_threads)
    return predictor, config


def export_litert(
    model, info: dict, out_dir, *, model_name: str = "classifier", quantize: str | None = None,
    seq_length: int | None = None, force: bool = False, check=None,
) -> Path:  # fmt: skip
    """Writes `out_dir/<model_name>/model.tflite` and its `electra_config.json`.

    Before the folder is published, the written flatbuffer is scored on the run's dev and
    test files against the Keras model (`litert_quality.measure`; `check(folder) -> dict`
    gives the report instead when passed), the report is kept in the config as `quality`,
    and the int8 rule is applied (`litert_quality.decide`): an int8 model that loses more
    than `MAX_DROP_POINTS` of dev, or whose dev file cannot be read, is refused unless
    `force`. The `export` command and this function apply the same check. Returns the
    folder; nothing is left behind on failure or refusal.
    """
    require_tensorflow("A LiteRT file")
    if check is None and not (info.get("data") or {}).get("dev"):  # refused before converting
        litert_quality.decide({}, quantize, force=force)
    seq_length = seq_length or model.preprocessor.sequence_length
    module = LiteTextModule(model, pair=info.get("pair", False), seq_length=seq_length)
    flatbuffer, outputs = convert(module, quantize)
    encoder = model.encoder.get_config()
    encoder.pop("name", None)
    config = {
        "kind": "finetuned",
        "format": "litert",
        "quantize": quantize,
        "task_kind": model.kind,
        "labels": getattr(model, "labels", []),
        "pair": module.pair,
        "seq_length": module.seq_length,
        "inputs": module.text_names,
        "outputs": outputs,
        "encoder": encoder,
        "lower_case": bool(model.preprocessor.lower_case),
        "strip_accents": bool(model.preprocessor.strip_accents),
        **{key: info.get(key) for key in ("task", "selected_by", "columns")},
    }
    target = Path(out_dir) / model_name
    try:
        with publishing(target) as scratch:
            (scratch / LITERT_FILE).write_bytes(flatbuffer)
            vocabulary = "".join(f"{token}\n" for token in model.preprocessor.vocabulary)
            (scratch / "vocab.txt").write_text(vocabulary, "utf-8")  # for callers' own checks
            (scratch / "electra_config.json").write_text(json.dumps(config, indent=2) + "\n")
            config["quality"] = _quality(model, info, scratch, check)
            (scratch / "electra_config.json").write_text(json.dumps(config, indent=2) + "\n")
            litert_quality.decide(config["quality"], quantize, force=force)
    except OSError as error:
        raise ConfigError(
            f"Could not write the LiteRT export into {target.parent} ({os_reason(error)}); free "
            "space or choose a writable --out. Nothing was left there."
        ) from None
    return target


def _quality(model, info: dict, folder: Path, check=None) -> dict:
    """The written flatbuffer's scores on the run's files against the Keras model's."""
    if check is not None:
        return check(folder) or {}
    if not info.get("data"):  # no files recorded: nothing to score (int8 is then refused)
        return {}
    return litert_quality.measure(model, info, open_litert(folder)[0])
