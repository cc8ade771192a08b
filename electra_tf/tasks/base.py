"""`TaskModel`: what the raw-text task models share (compile defaults, fit, predict, config).

Mixed into `ElectraTextClassifier` and `ElectraTokenClassifier` (before their
Keras base class), in the manner of keras-hub's `Task`. It gives them

- `compile(optimizer="auto", loss="auto", metrics="auto", defaults="standard")`:
  the model's `default_loss()` and `default_metrics()`; "auto" for the optimizer
  is AdamW with linear decay at the learning rate for the encoder's size, the
  rest from the `defaults` recipe (`FinetuneConfig.resolved`): "standard"
  (transformers' scripts: no warmup or layer-wise decay, epsilon 1e-8, random
  batches) or "paper" (10% warmup, layer-wise decay, epsilon 1e-6, batches
  grouped by length). It is made by `fit`, which
  knows the number of steps, whatever `fit` is given (strings, pairs, id arrays
  or a `tf.data.Dataset`). Each later `fit` keeps the optimizer's moments and
  runs a warmup and decay of its own over its own steps, so it trains again
  (the first one's schedule has reached 0 by then);
- `fit_packed(features, targets, ...)`: `keras.Model.fit` over packed rows in
  batches padded to their own longest row (or to `sequence_length` with the
  preprocessor's `pad_to="max"`), grouped by length or not (by default as the
  `defaults` recipe says), the order of epoch e a
  function of the seed and e alone (`electra_tf.data.batching`);
- `predict_packed(features, batch_size)`: outputs over length-sorted batches,
  padded as `fit_packed` pads them (on JAX, rows rounded up to a power of two), back
  in row order;
- `inference_function()`: the forward pass as one `tf.function` for every shape;
- `get_config`/`from_config` of the encoder and preprocessor parts.
"""

from __future__ import annotations

import math

import keras
import numpy as np

from electra_tf.data.batching import (
    batch_dataset,
    ordered_batches,
    pad_batch,
    rounded_rows,
    row_lengths,
)
from electra_tf.tasks.config import RECIPES, FinetuneConfig
from electra_tf.tasks.optimizer import finetuning_optimizer, finetuning_schedule
from electra_tf.tasks.text_classifier_preprocessor import compiles_each_shape, length_multiple

__all__ = [
    "TaskModel",
    "INPUT_NAMES",
    "inference_function",
    "batch_outputs",
    "dataset_steps",
    "encoder_and_preprocessor",
    "name_hits",
]

INPUT_NAMES = ("token_ids", "padding_mask", "segment_ids")


def encoder_and_preprocessor(
    init, preprocessor_class, *, dropout: float, sequence_length: int, pad_to: str = "longest"
):
    """A fresh copy of `init`'s encoder and a `preprocessor_class` of its vocabulary and
    casing, at most `sequence_length` long (and no longer than the encoder's positions)."""
    from electra_tf.data.vocabulary import read_vocabulary

    encoder = init.build_encoder(dropout=dropout)
    preprocessor = preprocessor_class(
        read_vocabulary(init.vocab_file),
        lower_case=init.lower_case,
        sequence_length=min(int(sequence_length), encoder.max_sequence_length),
        pad_to=pad_to,
    )
    return encoder, preprocessor


def dataset_steps(dataset, steps_per_epoch) -> int:
    """Batches per epoch of a `tf.data.Dataset` (`steps_per_epoch` if given)."""
    if steps_per_epoch:
        return int(steps_per_epoch)
    import tensorflow as tf

    cardinality = int(dataset.cardinality())
    if cardinality in (tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY):
        raise ValueError(
            "fit cannot tell how many batches the dataset holds (its cardinality is "
            "unknown or infinite), so it cannot set the learning-rate schedule; pass "
            "steps_per_epoch=N, or dataset.apply(tf.data.experimental.assert_cardinality(N))."
        )
    return cardinality


def name_hits(names, labels, padding: bool = False):
    """`[..., len(labels)]` booleans: which label each name of `names` (a string tensor;
    with `padding`, "" is no label) is, in the graph; a name that is none of `labels` stops
    the `tf.data` pipeline with a message naming the labels."""
    import tensorflow as tf

    hits = tf.equal(tf.expand_dims(names, -1), tf.constant([str(n) for n in labels]))
    known = tf.reduce_any(hits, -1)
    if padding:
        known = tf.logical_or(known, tf.equal(names, ""))
    check = tf.debugging.Assert(
        tf.reduce_all(known),
        [f"A label in the dataset is not one of {list(labels)}:",
         tf.boolean_mask(names, tf.logical_not(known))],
    )  # fmt: skip
    with tf.control_dependencies([check]):
        return tf.identity(hits)


class TaskModel:
    """Mixin of the raw-text task models (see the module docstring)."""

    def default_metrics(self) -> list:
        return []

    def compile(self, optimizer="auto", loss="auto", metrics="auto", defaults="standard",
                **kwargs):  # fmt: skip
        """`keras.Model.compile` with the model's defaults (see the module docstring)."""
        FinetuneConfig(defaults=defaults)  # one sentence for a recipe that is not known
        object.__setattr__(self, "_defaults", defaults)
        auto = isinstance(optimizer, str) and optimizer == "auto"
        if auto:
            optimizer = keras.optimizers.Adam()  # replaced by `fit`
        arguments = {
            "loss": self.default_loss() if isinstance(loss, str) and loss == "auto" else loss,
            "metrics": self.default_metrics() if metrics == "auto" else metrics,
            **kwargs,
        }
        # Kept for `fit`'s "auto" optimizer; set past Keras's tracking, as `compile` does
        # (a tracked list of metrics would count as new state of a built model).
        object.__setattr__(self, "_compile_arguments", arguments)
        object.__setattr__(self, "_auto_optimizer", "pending" if auto else None)
        keras.Model.compile(self, optimizer=optimizer, **arguments)

    def get_compile_config(self):
        # Not saved: a loaded model compiles afresh (`compile()`), as keras-hub's tasks do.
        return None

    def prepare_fit(self, steps_per_epoch: int, epochs: int, initial_epoch: int = 0) -> None:
        """Compiles with the defaults if need be and sets the "auto" optimizer for this fit.

        The first fit makes the paper's optimizer for `steps_per_epoch * (epochs -
        initial_epoch)` steps; a later fit gives it a fresh warmup and decay over its own
        steps, starting at the optimizer's current step.
        """
        if not self.compiled:
            self.compile()
        state = getattr(self, "_auto_optimizer", None)
        if state is None:
            return
        steps = int(steps_per_epoch) * max(1, int(epochs) - int(initial_epoch))
        config = FinetuneConfig(defaults=self.defaults_recipe()).resolved(
            self.encoder.hidden_dim, epochs
        )
        if state == "pending":
            if not self.built:  # the layer-wise rates are set per variable
                self.build()
            optimizer = finetuning_optimizer(self, config, steps)
            keras.Model.compile(self, optimizer=optimizer, **self._compile_arguments)
            object.__setattr__(self, "_auto_optimizer", "made")
            return
        start = int(self.optimizer.iterations.numpy())
        self.optimizer.learning_rate = finetuning_schedule(config, steps, offset=start)
        self.train_function = None  # the traced step holds the previous schedule

    def defaults_recipe(self) -> str:
        """The recipe `compile` was given ("standard" before any compile)."""
        return getattr(self, "_defaults", "standard")

    def grouped(self, group_by_length: bool | None) -> bool:
        """`fit`'s `group_by_length`, None meaning the `defaults` recipe's choice."""
        if group_by_length is None:
            return bool(RECIPES[self.defaults_recipe()]["group_by_length"])
        return bool(group_by_length)

    def packed_batch_multiple(self) -> int:
        """What batch lengths are rounded up to: 1, or the full length with `pad_to="max"`,
        or on JAX a quarter of it (`length_multiple`: XLA compiles each length anew)."""
        preprocessor = getattr(self, "preprocessor", None)
        if preprocessor is None:
            return 1
        if preprocessor.pad_to == "max":
            return int(preprocessor.sequence_length)
        return length_multiple(preprocessor.sequence_length)

    def fit_packed(
        self, features: dict, targets, *, batch_size: int, epochs: int, initial_epoch: int = 0,
        seed: int | None = None, group_by_length: bool | None = None, validation_data=None,
        per_token_targets: bool = False, **kwargs,
    ):  # fmt: skip
        """`keras.Model.fit` on packed `[N, S]` rows (see the module docstring).

        `features` may hold `start_positions` `[N]` (a joint span head's input) beside the
        ids. `seed` defaults to a draw from NumPy's global generator; `validation_data` is
        `(features, targets)` of packed rows (or a `tf.data.Dataset` of batches);
        `per_token_targets` cuts `[N, S]` targets with the inputs (tags), otherwise targets
        are whole rows (multi-hot labels).
        """
        rows = len(features["token_ids"])
        if rows == 0:
            raise ValueError("fit was given no examples.")
        steps = math.ceil(rows / batch_size)
        self.prepare_fit(steps, epochs, initial_epoch)
        seed = int(np.random.randint(2**31 - 1)) if seed is None else int(seed)
        multiple = self.packed_batch_multiple()
        dataset = batch_dataset(
            {
                name: features[name]
                for name in (*INPUT_NAMES, "start_positions")
                if name in features
            },
            targets,
            batch_size=batch_size,
            seed=seed,
            epochs=range(initial_epoch, epochs),
            group=50 if self.grouped(group_by_length) else 0,
            multiple=multiple,
            cut_targets=per_token_targets,
        )
        if isinstance(validation_data, tuple):  # else a dataset of batches, or None
            validation_data = batch_dataset(
                *validation_data, batch_size=batch_size, group=0, multiple=multiple,
                cut_targets=per_token_targets,
            )  # fmt: skip
        self.build_compiled_state(dataset)
        return keras.Model.fit(
            self,
            dataset,
            epochs=epochs,
            steps_per_epoch=steps,
            initial_epoch=initial_epoch,
            validation_data=validation_data,
            shuffle=False,  # the dataset is shuffled, by seed and epoch
            **kwargs,
        )

    def build_compiled_state(self, dataset) -> None:
        """Builds the compiled loss and metrics from one batch's shapes before `fit`. Left to
        the first step (Keras builds them ahead only under a distribution strategy), their
        variables make `tf.function` trace the train step twice: about 6 s a `fit` for a
        6-layer encoder on 2 cores. The same weights either way (tested)."""
        build = getattr(self, "_symbolic_build", None)  # Keras 3's own step (private)
        if build is not None and getattr(self, "_distribute_strategy", None) is None:
            build(data_batch=next(iter(dataset.take(1))))

    def fit_dataset(self, dataset, epochs: int = 1, initial_epoch: int = 0, **kwargs):
        """`keras.Model.fit` on a `tf.data.Dataset` of `(inputs, targets)` batches, with the
        "auto" optimizer set for its number of batches."""
        steps = dataset_steps(dataset, kwargs.get("steps_per_epoch"))
        self.prepare_fit(steps, epochs, initial_epoch)
        kwargs.setdefault("shuffle", False)  # shuffled (or not) by its maker
        self.build_compiled_state(dataset)
        return keras.Model.fit(self, dataset, epochs=epochs, initial_epoch=initial_epoch, **kwargs)

    def evaluate_packed(self, features: dict, targets, *, batch_size: int,
                        per_token_targets: bool = False, **kwargs):  # fmt: skip
        """`keras.Model.evaluate` on packed rows, batched as `fit_packed`'s validation data
        (compiled with the defaults first if need be)."""
        if not self.compiled:
            self.compile()
        dataset = batch_dataset(
            {name: features[name] for name in INPUT_NAMES}, targets, batch_size=batch_size,
            group=0, multiple=self.packed_batch_multiple(), cut_targets=per_token_targets,
        )  # fmt: skip
        return keras.Model.evaluate(self, dataset, **kwargs)

    def evaluate_dataset(self, dataset, **kwargs):
        """`keras.Model.evaluate` on a `tf.data.Dataset` of `(inputs, targets)` batches."""
        if not self.compiled:
            self.compile()
        return keras.Model.evaluate(self, dataset, **kwargs)

    def predict_packed(self, features: dict, batch_size: int) -> np.ndarray:
        """The model's outputs over length-sorted batches, back in row order."""
        outputs, order = [], []
        for index, output in batch_outputs(self, features, batch_size):
            outputs.append(output)
            order.append(index)
        if not outputs:
            return np.zeros((0,))
        width = max(o.shape[1] for o in outputs) if outputs[0].ndim == 3 else None
        if width is not None:  # per-token outputs: padded to the widest batch
            outputs = [np.pad(o, [(0, 0), (0, width - o.shape[1]), (0, 0)]) for o in outputs]
        rows = len(features["padding_mask"])
        result = np.empty((rows, *outputs[0].shape[1:]), outputs[0].dtype)
        result[np.concatenate(order)] = np.concatenate(outputs)
        return result

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


def batch_outputs(model, features: dict, batch_size: int):
    """(row indices, numpy outputs) of each batch of `model`'s forward pass over `[N, S]`
    rows: batches of rows sorted by length, cut to their longest row as `fit_packed` cuts
    them. On JAX, where XLA compiles each shape anew, a batch's rows are rounded up to a
    power of two (`rounded_rows`) and the repeated rows' outputs dropped, so calls of any
    size reuse a few compiled programs (measured: docs/results/backends.md)."""
    lengths = row_lengths(features["padding_mask"])
    forward = inference_function(model)
    multiple = model.packed_batch_multiple()
    rounded = compiles_each_shape()
    for index in ordered_batches(lengths, batch_size):
        rows = rounded_rows(index, batch_size) if rounded else index
        batch = pad_batch({k: features[k] for k in INPUT_NAMES}, rows, lengths, multiple)
        output = forward({k: v.astype(np.int32) for k, v in batch.items()})
        count = len(index)
        yield index, keras.tree.map_structure(lambda v, n=count: np.asarray(v)[:n], output)


def inference_function(model):
    """`model(inputs, training=False)` as one `tf.function` for every `[batch, length]`;
    on JAX or PyTorch, Keras's own compiled prediction of one batch (`predict_on_batch`)."""
    function = getattr(model, "_inference_function", None)
    if function is None and keras.config.backend() != "tensorflow":
        function = model.predict_on_batch
        object.__setattr__(model, "_inference_function", function)  # not Keras state
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
