import keras
import numpy as np
import pytest
from helpers import tiny_config

from electra_tf.layers.initializers import draws_skipped, skipping_draws
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _pretrainer(initialization: str):
    return ElectraPretrainer(tiny_config(f"model.initialization={initialization}", layers=2))


@pytest.mark.parametrize("initialization", ["reference", "truncated_normal"])
def test_a_build_inside_the_scope_draws_no_weight(initialization):
    """Every weight of a pre-trainer (both encoders, the embedding projection, both heads)
    built inside `draws_skipped` is one constant (0, or LayerNorm's 1), so no random
    initializer of the models escapes the scope; built outside, the kernels are drawn."""
    with draws_skipped():
        skipped = _pretrainer(initialization)
    assert not skipping_draws()
    drawn = _pretrainer(initialization)
    assert len(skipped.weights) == len(drawn.weights) > 40
    not_constant = [w.path for w in skipped.weights if np.ptp(np.asarray(w.numpy())) != 0]
    assert not not_constant
    kernels = [w for w in drawn.weights if w.path.endswith(("kernel", "embeddings"))]
    assert len(kernels) > 20 and all(np.ptp(np.asarray(w.numpy())) > 0 for w in kernels)


def test_skipping_the_draws_leaves_every_later_draw_as_it_was():
    """The initializers are still made in the scope, each taking its seed from Keras'
    global generator, so what is drawn after a build (a task head) is the same either way."""

    def after_a_build(skip: bool):
        keras.utils.set_random_seed(11)
        with draws_skipped(skip):
            _pretrainer("reference")
        head = keras.layers.Dense(3, kernel_initializer=keras.initializers.TruncatedNormal())
        head.build((None, 4))
        return np.asarray(head.kernel.numpy())

    np.testing.assert_array_equal(after_a_build(True), after_a_build(False))


def test_an_encoder_read_from_weights_equals_one_built_and_assigned_outside_the_scope():
    """`Initialization.build_encoder` skips the draws only when weights follow; the encoder
    it gives holds exactly those weights, and without weights it is drawn as before."""
    from electra_tf.tasks.initialization import Initialization

    keras.utils.set_random_seed(5)
    source = _pretrainer("truncated_normal").discriminator.encoder
    init = Initialization.from_encoder("test", source, "vocab.txt")
    built = init.build_encoder(dropout=0.0)
    assert [w.path for w in built.weights] == [
        w.path.removeprefix("discriminator/") for w in source.weights
    ]
    for mine, theirs in zip(built.weights, source.weights, strict=True):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    fresh = Initialization("scratch", init.encoder_config, None, "vocab.txt").build_encoder()
    assert np.ptp(np.asarray(fresh.weights[0].numpy())) > 0
