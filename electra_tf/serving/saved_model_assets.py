"""What a SavedModel export carries beside its graph: its config and TF Serving warm-up requests.

- `assets.extra/electra_config.json` (`write_config_asset`): what rebuilds the
  encoder from the SavedModel (`electra_tf.tasks.initialization` reads it);
- `assets.extra/tf_serving_warmup_requests` (`write_warmup_requests`): the
  PredictionLogs TF Serving replays when it loads the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import tensorflow as tf

__all__ = ["prediction_log", "write_config_asset", "write_warmup_requests"]


def write_config_asset(
    folder, kind: str, encoder, lower_case: bool, strip_accents, **extra
) -> Path:
    """`assets.extra/electra_config.json`: what rebuilds the encoder from this SavedModel.

    `extra` keys are recorded beside (for example the serving export's `kernel_layout`).
    """
    config = encoder.get_config()
    config.pop("name", None)
    path = Path(folder) / "assets.extra" / "electra_config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "kind": kind,
                "encoder": config,
                "lower_case": lower_case,
                "strip_accents": strip_accents,
                **extra,
            },
            indent=2,
        )
        + "\n"
    )
    return path


def write_warmup_requests(path, model_name: str, seq_length: int, vocabulary_size: int) -> Path:
    """`assets.extra/tf_serving_warmup_requests`: PredictionLogs TF Serving replays on load."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for batch in (1, 8):
            ids = rng.integers(5, vocabulary_size, size=(batch, seq_length)).astype(np.int32)
            inputs = {"input_word_ids": ids, "input_mask": np.ones_like(ids)}
            inputs["input_type_ids"] = np.zeros_like(ids)
            writer.write(prediction_log(model_name, "serving_default", inputs))
        for signature, inputs in (
            ("serve_text", {"text": ["The weather is fine today."]}),
            ("serve_text_pair", {"text_a": ["Is it raining?"], "text_b": ["No, it is sunny."]}),
        ):
            writer.write(prediction_log(model_name, signature, inputs))
    return path


def prediction_log(model_name: str, signature: str, inputs: dict) -> bytes:
    """One warm-up record: a serialized PredictionLog of a PredictRequest for `signature` of
    `model_name` with `inputs` ({name: array or list})."""
    from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

    request = predict_pb2.PredictRequest()
    request.model_spec.name = model_name
    request.model_spec.signature_name = signature
    for name, value in inputs.items():
        request.inputs[name].CopyFrom(tf.make_tensor_proto(value))
    log = prediction_log_pb2.PredictLog(request=request)
    return prediction_log_pb2.PredictionLog(predict_log=log).SerializeToString()
