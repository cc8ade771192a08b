"""Unigram generator: replacements drawn by corpus token frequency (paper, Section 3.2).

No generator network runs: each masked position gets a token sampled from
the corpus unigram distribution that `electra-tf prepare` counted
(`unigram_counts.npy` in the data folder, or `objective.unigram_counts`).
Special tokens are never sampled. The discriminator trains exactly as in
ELECTRA (a sample equal to the original counts as real).
"""

from __future__ import annotations

import io
import os

import numpy as np
from keras import ops

from electra_tf.config import ConfigError
from electra_tf.data.remote_files import is_remote, join
from electra_tf.ops import backend, sampling
from electra_tf.pretraining import flops
from electra_tf.pretraining.objectives.base import StepContext, Streams
from electra_tf.pretraining.objectives.electra import ElectraObjective

__all__ = ["UnigramObjective", "unigram_counts_path", "read_counts", "sample_unigram"]


def _gfile():
    """`tf.io.gfile` (local paths and gs://... alike), or None without TensorFlow (a JAX or
    PyTorch machine, where the counts are read from local files)."""
    tf = backend.tensorflow()
    return None if tf is None else tf.io.gfile


def _exists(path: str) -> bool:
    gfile = _gfile()
    return os.path.exists(path) if gfile is None else gfile.exists(path)


def unigram_counts_path(config) -> str:
    """`objective.unigram_counts`, or `unigram_counts.npy` beside the training files."""
    path = config.objective.unigram_counts
    if path:
        return path
    first = config.data.train_files.split(",")[0].strip()
    if not first:
        return ""
    # a folder with latest.json (prepare --runner beam on an object store): its version's;
    # tf.io.gfile reads local paths and gs://... alike
    gfile = _gfile()
    if os.path.isdir(first) if gfile is None else gfile.isdir(first):
        from electra_tf.data.tfrecords import published_folder

        return join(published_folder(first), "unigram_counts.npy")
    return join(first.rsplit("/", 1)[0] if is_remote(first) else os.path.dirname(first),
                "unigram_counts.npy")  # fmt: skip


def read_counts(path: str) -> np.ndarray:
    """float64 `[V]` token counts of a `unigram_counts.npy`, local or gs://... alike."""
    gfile = _gfile()
    with open(path, "rb") if gfile is None else gfile.GFile(path, "rb") as file:
        return np.asarray(np.load(io.BytesIO(file.read())), np.float64).reshape(-1)


def sample_unigram(cdf, uniforms):
    """Inverse-CDF samples: the first id whose cumulative probability exceeds each uniform.

    The cumulative probabilities are compared in float32 on every backend (TensorFlow's
    `searchsorted`, or `keras.ops.searchsorted` off its fast paths).

    Args:
        cdf: float64 or float32 `[V]`, non-decreasing, last entry 1.
        uniforms: float `[...]` in (0, 1).

    Returns:
        int32 `[...]`.
    """
    if not backend.tensorflow_fast_paths():
        if isinstance(cdf, np.ndarray):  # float64 counts: float32 here (JAX has no float64)
            cdf = cdf.astype(np.float32)
        cdf = ops.cast(ops.convert_to_tensor(cdf), "float32")
        flat = ops.reshape(ops.cast(uniforms, "float32"), (-1,))
        ids = ops.cast(ops.searchsorted(cdf, flat, side="right"), "int32")
        ids = ops.minimum(ids, ops.shape(cdf)[0] - 1)
        return ops.reshape(ids, ops.shape(uniforms))
    tf = backend.tensorflow()
    cdf = tf.cast(cdf, tf.float32)
    flat = tf.reshape(tf.cast(uniforms, tf.float32), [1, -1])
    ids = tf.searchsorted(cdf[None, :], flat, side="right", out_type=tf.int32)
    ids = tf.minimum(ids, tf.shape(cdf)[0] - 1)
    return tf.reshape(ids, tf.shape(uniforms))


class UnigramObjective(ElectraObjective):
    """Replaced-token detection against a unigram "generator"."""

    name = "unigram"
    portable = True  # keras.ops; the portable step trains the discriminator only
    reports = ("sampling", "discriminator")

    def __init__(self, config, generator, discriminator):
        super().__init__(config, generator, discriminator)
        path = unigram_counts_path(config)
        if not path or not _exists(path):
            raise ConfigError(
                f"The unigram objective needs token counts, but {path or 'no file'!r} does not "
                "exist: run `electra-tf prepare` (it writes unigram_counts.npy) or set "
                "objective.unigram_counts."
            )
        counts = read_counts(path)
        vocabulary = config.model.vocabulary_size
        if counts.shape[0] != vocabulary:
            raise ConfigError(
                f"{path} holds {counts.shape[0]} counts but model.vocabulary_size is "
                f"{vocabulary}: use the counts of the vocabulary the data was packed with."
            )
        counts = counts.copy()
        for special in self.special_ids:
            counts[special] = 0.0
        if counts.sum() <= 0:
            raise ConfigError(f"{path} counts no ordinary token; prepare the data again.")
        self.cdf = np.cumsum(counts / counts.sum())
        self.cdf[-1] = 1.0

    @staticmethod
    def train_flops(config) -> float:
        """The discriminator alone (sampling from a table costs no matmul)."""
        disc, _ = flops.model_shapes(config)
        return disc.train(config.train.batch_size, 1.0, "rtd")

    def __call__(self, batch, context: StepContext, training: bool, with_gradients: bool):
        token_ids = ops.cast(batch["token_ids"], "int32")
        masked = self.mask(batch, context)
        draws = context.uniform(Streams.GUMBEL, self.num_predictions)
        samples = sample_unigram(self.cdf, draws)
        corrupted, labels = sampling.corrupt(token_ids, masked.positions, masked.weights, samples)
        detector, discriminator = self.detect(
            batch, masked, corrupted, labels, context, training, with_gradients
        )
        mlm = {"weights": masked.weights, "targets": masked.targets, "samples": samples}
        return self.step_output([detector], with_gradients, mlm=mlm, discriminator=discriminator)
