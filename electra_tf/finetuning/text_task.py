"""What the raw-text task models share: compiling with the paper's optimizer, fitting on text.

`TextTask` is mixed into `ElectraTextClassifier` and `ElectraTokenClassifier`
(before their Keras base class). It gives them

- `compile(optimizer="auto", loss="auto", metrics="auto")`: the model's
  `default_loss()` and `default_metrics()`; "auto" for the optimizer is the
  paper's layer-wise AdamW with 10% warmup and linear decay at the learning rate
  for the encoder's size (`FinetuneConfig.resolved`), made when `fit` knows the
  number of steps;
- `fit_packed(features, targets, ...)`: `keras.Model.fit` over packed rows in
  batches padded to their own longest row, grouped by length, the order of
  epoch e a function of the seed and e alone (`electra_tf.data.batching`);
- `inference_function()`: the forward pass as one `tf.function` for every shape;
- `export_for_serving(out_dir)`: the SavedModel that takes raw text
  (`electra_tf.serving.task_export`).
"""

from __future__ import annotations

import math

import keras
import numpy as np

from electra_tf.data.batching import batch_dataset
from electra_tf.finetuning.config import FinetuneConfig
from electra_tf.finetuning.optimizer import finetuning_optimizer

__all__ = ["TextTask", "INPUT_NAMES", "inference_function"]

INPUT_NAMES = ("token_ids", "padding_mask", "segment_ids")


class TextTask:
    """Mixin of the raw-text task models (see the module docstring)."""

    def default_metrics(self) -> list:
        return []

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """`keras.Model.compile` with the model's defaults (see the module docstring)."""
        self._auto_optimizer = isinstance(optimizer, str) and optimizer == "auto"
        if self._auto_optimizer:
            optimizer = keras.optimizers.Adam()  # replaced by `fit`
        arguments = {
            "loss": self.default_loss() if isinstance(loss, str) and loss == "auto" else loss,
            "metrics": self.default_metrics() if metrics == "auto" else metrics,
            **kwargs,
        }
        # Kept for `fit`'s "auto" optimizer; set past Keras's tracking, as `compile` does
        # (a tracked list of metrics would count as new state of a built model).
        object.__setattr__(self, "_compile_arguments", arguments)
        keras.Model.compile(self, optimizer=optimizer, **arguments)

    def get_compile_config(self):
        # Not saved: a loaded model compiles afresh (`compile()`), as keras-hub's tasks do.
        return None

    def auto_compile(self, rows: int, batch_size: int, epochs: int) -> None:
        """Compiles with the defaults if need be; makes the "auto" optimizer for this fit."""
        if not self.compiled:
            self.compile()
        if not getattr(self, "_auto_optimizer", False):
            return
        if int(self.optimizer.iterations.numpy()) > 0:
            return
        if not self.built:  # the layer-wise rates are set per variable
            self.build()
        steps = math.ceil(rows / batch_size) * epochs
        config = FinetuneConfig().resolved(self.encoder.hidden_dim, epochs)
        optimizer = finetuning_optimizer(self, config, steps)
        keras.Model.compile(self, optimizer=optimizer, **self._compile_arguments)
        self._auto_optimizer = False

    def fit_packed(
        self, features: dict, targets, *, batch_size: int, epochs: int, initial_epoch: int = 0,
        seed: int | None = None, group_by_length: bool = True, validation_data=None, **kwargs,
    ):  # fmt: skip
        """`keras.Model.fit` on packed `[N, S]` rows (see the module docstring).

        `seed` defaults to a draw from NumPy's global generator; `validation_data` is
        `(features, targets)` of packed rows.
        """
        rows = len(features["token_ids"])
        if rows == 0:
            raise ValueError("fit was given no examples.")
        self.auto_compile(rows, batch_size, epochs)
        seed = int(np.random.randint(2**31 - 1)) if seed is None else int(seed)
        dataset = batch_dataset(
            {name: features[name] for name in INPUT_NAMES},
            targets,
            batch_size=batch_size,
            seed=seed,
            epochs=range(initial_epoch, epochs),
            group=50 if group_by_length else 0,
        )
        if validation_data is not None:
            validation_data = batch_dataset(*validation_data, batch_size=batch_size, group=0)
        return keras.Model.fit(
            self,
            dataset,
            epochs=epochs,
            steps_per_epoch=math.ceil(rows / batch_size),
            initial_epoch=initial_epoch,
            validation_data=validation_data,
            shuffle=False,  # the dataset is shuffled, by seed and epoch
            **kwargs,
        )

    def inference_function(self):
        """`self(inputs, training=False)` as one `tf.function` (see `inference_function`)."""
        return inference_function(self)

    def parts_config(self) -> dict:
        """The serialized encoder and preprocessor, for `get_config`."""
        preprocessor = self.preprocessor
        return {
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "preprocessor": None
            if preprocessor is None
            else keras.saving.serialize_keras_object(preprocessor),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
        if config.get("preprocessor") is not None:
            config["preprocessor"] = keras.saving.deserialize_keras_object(config["preprocessor"])
        return cls(**config)

    def export_for_serving(self, out_dir, model_name: str = "classifier", version: int = 1,
                           pair: bool = False):  # fmt: skip
        """Writes `out_dir/<model_name>/<version>/`: one SavedModel, raw text in, label names
        and probabilities out (`electra_tf.serving.task_export`); `pair` adds `text_pair`.
        Keras's own `export` keeps only the id inputs."""
        from electra_tf.serving.task_export import export_finetuned

        info = {"kind": self.kind, "labels": self.labels, "pair": pair, "task": model_name}
        return export_finetuned(self, info, out_dir, model_name=model_name, version=version)


def inference_function(model):
    """`model(inputs, training=False)` as one `tf.function` for every `[batch, length]`."""
    function = getattr(model, "_inference_function", None)
    if function is None:
        import tensorflow as tf

        spec = {name: tf.TensorSpec([None, None], tf.int32) for name in INPUT_NAMES}
        function = tf.function(
            lambda inputs: model(inputs, training=False),
            input_signature=[spec],
            autograph=False,  # the call has no Python control flow on tensors to convert
        )
        object.__setattr__(model, "_inference_function", function)  # not Keras state
    return function
