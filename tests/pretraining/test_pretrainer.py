import keras
import numpy as np
import pytest
import tensorflow as tf
from helpers import structured_ids, tiny_config

from electra_tf.pretraining.optimizer import ElectraAdamW
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _dataset(n=256, seq=16, batch=16, seed=1, repeat=True):
    ids, mask, segments = structured_ids(n, seq, seed=seed)
    data = {
        "token_ids": ids.astype("int32"),
        "padding_mask": mask.astype("int32"),
        "segment_ids": segments.astype("int32"),
    }
    ds = tf.data.Dataset.from_tensor_slices(data)
    if repeat:
        ds = ds.shuffle(n, seed=0).repeat()
    return ds.batch(batch)


def _batch(batch=8, seq=16, seed=3):
    ids, mask, segments = structured_ids(batch, seq, seed=seed)
    return {
        "token_ids": ids.astype("int32"),
        "padding_mask": mask.astype("int32"),
        "segment_ids": segments.astype("int32"),
    }


@pytest.mark.slow
def test_tiny_fit_learns_a_structured_stream():
    _check_fit_learns(layers=2, epochs=8, learning_rate=3e-3)


def test_tiny_fit_learns_a_structured_stream_quick():
    """Default twin of `test_tiny_fit_learns_a_structured_stream` (slow: two layers, 200
    steps at 3e-3): one layer, 125 steps at 6e-3, the same checks."""
    _check_fit_learns(layers=1, epochs=5, learning_rate=6e-3)


def _check_fit_learns(layers, epochs, learning_rate):
    """A hidden-32 pretrainer of `layers` layers fits `epochs` epochs of 25 steps: every
    loss falls, the discriminator's AUC rises from chance, about 15% of tokens replaced."""
    config = tiny_config(
        f"model.num_layers={layers}",
        "model.hidden_dim=32",
        "model.embedding_dim=16",
        "model.intermediate_dim=64",
        "train.batch_size=16",
        f"train.learning_rate={learning_rate}",
        f"train.num_steps={25 * epochs}",
        "train.warmup_steps=10",
    )
    keras.utils.set_random_seed(0)
    model = ElectraPretrainer(config)
    model.compile()
    history = model.fit(_dataset(), steps_per_epoch=25, epochs=epochs, verbose=0).history
    assert history["mlm_loss"][-1] < history["mlm_loss"][0] - 0.1
    assert history["disc_auc"][0] < 0.56 and history["disc_auc"][-1] > 0.6
    assert history["disc_loss"][-1] < history["disc_loss"][0]
    # About 15% of real tokens are chosen, and few samples equal the original early on.
    assert 0.08 < history["replaced_fraction"][-1] < 0.16
    expected = (
        "loss",
        "mlm_loss",
        "mlm_accuracy",
        "sampled_accuracy",
        "disc_loss",
        "disc_accuracy",
        "disc_precision",
        "disc_recall",
        "disc_auc",
        "replaced_fraction",
        "learning_rate",
    )
    assert set(expected) <= set(history)


def test_total_loss_is_mlm_plus_fifty_times_discriminator():
    """Its two evaluations run eagerly (cheaper than the trace); the full form, traced, is
    `test_total_loss_is_mlm_plus_fifty_times_discriminator_traced`."""
    _check_total_loss(run_eagerly=True)


@pytest.mark.slow
def test_total_loss_is_mlm_plus_fifty_times_discriminator_traced():
    _check_total_loss(run_eagerly=False)


def _check_total_loss(run_eagerly):
    """The evaluated loss is the MLM loss plus 50 times the discriminator's, the same twice.
    Seeded: unseeded, the weights (and whether the two batches' means agree to 1e-4) came
    from whatever ran before in the process."""
    keras.utils.set_random_seed(0)
    model = ElectraPretrainer(tiny_config())
    model.compile(run_eagerly=run_eagerly)
    logs = model.evaluate(_dataset(repeat=False, batch=8), steps=2, return_dict=True, verbose=0)
    assert logs["loss"] == pytest.approx(logs["mlm_loss"] + 50 * logs["disc_loss"], rel=1e-4)
    again = model.evaluate(_dataset(repeat=False, batch=8), steps=2, return_dict=True, verbose=0)
    assert again == logs  # evaluation draws the same masks every time


def _one_step_model(strategy, jit=False, config_overrides=(), run_eagerly=False):
    """The seeded, compiled pretrainer of `_one_step_weights`, built under `strategy`."""
    config = tiny_config(
        "model.dropout=0.0",
        "train.batch_size=8",
        "train.clip_norm=0.05",
        "train.learning_rate=0.01",
        *config_overrides,
    )
    keras.utils.set_random_seed(7)
    with strategy.scope():
        model = ElectraPretrainer(config)
        model.compile(jit_compile=jit, run_eagerly=run_eagerly)
    return model


def _one_step_weights(strategy, jit=False, config_overrides=(), run_eagerly=False):
    model = _one_step_model(strategy, jit, config_overrides, run_eagerly)
    data = tf.data.Dataset.from_tensors(_batch()).repeat(2)
    if strategy.num_replicas_in_sync > 1:
        data = strategy.experimental_distribute_dataset(data)
    history = model.fit(data, steps_per_epoch=2, epochs=1, verbose=0)
    return history.history["loss"][-1], [v.numpy() for v in model.trainable_variables]


@pytest.fixture(scope="module")
def mirrored_graph():
    """`_one_step_weights` under a two-CPU `MirroredStrategy`, graph passes: computed once,
    for the one-replica and the XLA comparisons (each run traces the step anew)."""
    return _one_step_weights(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))


def test_one_and_two_replicas_make_the_same_update(mirrored_graph):
    """The one-replica reference runs its two steps eagerly (cheaper than its trace); the
    full form, the reference traced, is
    `test_one_and_two_replicas_make_the_same_update_traced`."""
    _check_one_and_two_replicas(mirrored_graph, run_eagerly=True)


def test_distributed_fit_ends_where_kerass_fit_does_and_runs_the_step_unconverted(
    mirrored_graph,
):
    """`distributed_fit` (the multi-worker loop, here under the same two-CPU mirrored
    strategy) makes Keras `fit`'s two steps, and traces the step without AutoGraph, as
    Keras's `fit` does: the step is `keras.ops` code that JAX's tracer also runs."""
    from tensorflow.python.autograph.core import ag_ctx

    from electra_tf.pretraining.distribute import distributed_fit

    model = _one_step_model(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    step, statuses = model.train_step, []

    def recorded_step(data):
        statuses.append(ag_ctx.control_status_ctx().status)
        return step(data)

    model.train_step = recorded_step
    data = tf.data.Dataset.from_tensors(_batch()).repeat(2)
    distributed_fit(model, data, steps_per_epoch=2, epochs=1, verbose=0)
    assert statuses and set(statuses) == {ag_ctx.Status.DISABLED}, statuses
    _, reference = mirrored_graph
    ours = [v.numpy() for v in model.trainable_variables]
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_one_and_two_replicas_make_the_same_update_traced(mirrored_graph):
    _check_one_and_two_replicas(mirrored_graph, run_eagerly=False)


def _check_one_and_two_replicas(mirrored_graph, run_eagerly):
    """Two replicas (graph) end on the one-replica run's loss and weights."""
    # Clipping is active (norm 0.05), so the test also checks that clipping sees the summed
    # gradient, not each replica's part.
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    one_loss, one = _one_step_weights(strategy, run_eagerly=run_eagerly)
    two_loss, two = mirrored_graph
    assert abs(one_loss - two_loss) <= 1e-5 * abs(one_loss)
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(one, two)) < 1e-5
    initial = ElectraPretrainer(tiny_config("model.dropout=0.0"))  # the weights did move
    assert len(initial.trainable_variables) == len(one)


def test_xla_passes_match_the_graph_under_mirrored(mirrored_graph):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    graph_loss, graph = mirrored_graph
    xla_loss, xla = _one_step_weights(strategy, jit=True)
    assert xla_loss == pytest.approx(graph_loss, rel=1e-5)
    assert max(float(np.max(np.abs(a - b))) for a, b in zip(graph, xla)) < 1e-4


@pytest.mark.slow
def test_same_seed_same_run_other_seed_other_run():
    _check_same_seed_same_run_other_seed_other_run(run_eagerly=False)


def test_same_seed_same_run_other_seed_other_run_quick():
    """Default twin of `test_same_seed_same_run_other_seed_other_run` (slow: each run traces
    its step): the three runs' two steps run eagerly (cheaper than three traces)."""
    _check_same_seed_same_run_other_seed_other_run(run_eagerly=True)


def _check_same_seed_same_run_other_seed_other_run(run_eagerly):
    """Two runs of one seed end on the same weights, a run of another seed elsewhere."""
    strategy = tf.distribute.get_strategy()
    a = _one_step_weights(strategy, run_eagerly=run_eagerly)[1]
    b = _one_step_weights(strategy, run_eagerly=run_eagerly)[1]
    c = _one_step_weights(strategy, config_overrides=["train.seed=99"], run_eagerly=run_eagerly)[1]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


@pytest.mark.parametrize("precision", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_trains_with_float32_sampling(precision):
    model = ElectraPretrainer(tiny_config(f"train.mixed_precision={precision}"))
    model.compile()
    assert (
        model.discriminator.encoder.transformer_layers[0].compute_dtype == precision.split("_")[1]
    )
    assert model.discriminator.encoder.embeddings.token_embedding.embeddings.dtype == "float32"
    if precision == "mixed_float16":
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    before = [v.numpy() for v in model.trainable_variables]
    # Float16's dynamic loss scale starts at 2^15 and halves on each overflowing step (which
    # is skipped), so give it a few steps.
    history = model.fit(_dataset(batch=4), steps_per_epoch=12, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][-1])
    moved = sum(not np.array_equal(b, v.numpy()) for b, v in zip(before, model.trainable_variables))
    assert moved > len(before) // 2


@pytest.mark.slow
def test_learning_rate_log_follows_the_schedule():
    _check_learning_rate_log_follows_the_schedule(run_eagerly=False)


def test_learning_rate_log_follows_the_schedule_quick():
    """Default twin of `test_learning_rate_log_follows_the_schedule` (slow: the step traced):
    the same three steps, run eagerly (for three steps, cheaper than the trace)."""
    _check_learning_rate_log_follows_the_schedule(run_eagerly=True)


def _check_learning_rate_log_follows_the_schedule(run_eagerly):
    """Three steps of a warmup-4, 8-step schedule log its worked-out learning rates."""
    model = ElectraPretrainer(
        tiny_config("train.warmup_steps=4", "train.num_steps=8", "train.learning_rate=0.1")
    )
    model.compile(run_eagerly=run_eagerly)
    assert isinstance(model.optimizer, ElectraAdamW)
    history = model.fit(_dataset(batch=4), steps_per_epoch=1, epochs=3, verbose=0).history
    # Steps 0, 1, 2: 0.1 * (1 - s/8) * s/4.
    np.testing.assert_allclose(
        history["learning_rate"], [0.0, 0.1 * 7 / 8 / 4, 0.1 * 6 / 8 / 2], rtol=1e-5
    )


@pytest.mark.slow
def test_config_and_model_serialization_round_trip_after_a_traced_step(tmp_path):
    """The full form of `test_config_and_model_serialization_round_trip`: its step traced."""
    _check_serialization_round_trip(tmp_path, run_eagerly=False)


def test_config_and_model_serialization_round_trip(tmp_path):
    """Saved after one eager step (cheaper than its trace); the full form, the step traced,
    is `test_config_and_model_serialization_round_trip_after_a_traced_step`."""
    _check_serialization_round_trip(tmp_path, run_eagerly=True)


def _check_serialization_round_trip(tmp_path, run_eagerly):
    """The config round-trips, and a trained model saved as .keras loads to the same outputs."""
    model = ElectraPretrainer(tiny_config("model.weight_tying=none"))
    clone = ElectraPretrainer.from_config(model.get_config())
    assert clone.config == model.config
    model.compile(run_eagerly=run_eagerly)
    model.fit(_dataset(batch=4), steps_per_epoch=1, epochs=1, verbose=0)
    path = str(tmp_path / "pretrainer.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    batch = _batch()
    np.testing.assert_allclose(np.asarray(loaded(batch)), np.asarray(model(batch)), atol=1e-6)
    assert loaded.config == model.config


@pytest.mark.slow
def test_from_recipe_and_a_plain_tuple_batch_traced():
    """The full form of `test_from_recipe_and_a_plain_tuple_batch`: its step traced."""
    _check_from_recipe_and_a_plain_tuple_batch(run_eagerly=False)


def test_from_recipe_and_a_plain_tuple_batch():
    """Its step runs eagerly (cheaper than the trace); the full form, traced, is
    `test_from_recipe_and_a_plain_tuple_batch_traced`."""
    _check_from_recipe_and_a_plain_tuple_batch(run_eagerly=True)


def _check_from_recipe_and_a_plain_tuple_batch(run_eagerly):
    """A recipe name and overrides make a pretrainer that trains on an (x, y) tuple batch."""
    model = ElectraPretrainer.from_recipe(
        "tiny",
        "model.num_layers=1",
        "model.vocabulary_size=64",
        "data.sequence_length=16",
        "data.cls_id=2",
        "data.sep_id=3",
        "data.mask_id=4",
        "train.warmup_steps=0",
    )
    model.compile(run_eagerly=run_eagerly)
    data = tf.data.Dataset.from_tensors((_batch(), tf.zeros([8]))).repeat()
    history = model.fit(data, steps_per_epoch=1, epochs=1, verbose=0).history
    assert np.isfinite(history["loss"][0])


def _memory_optimization():
    """This thread's function options: Grappler's memory-optimization setting, and
    whether soft placement is on."""
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.eager import context

    config = config_pb2.ConfigProto()
    config.ParseFromString(context.context().function_call_options.config_proto_serialized)
    return config.graph_options.rewrite_options.memory_optimization, config.allow_soft_placement


def test_fit_traces_its_step_without_grapplers_addn_rewrite():
    """`fit` turns the memory optimizer off in its thread's function options before Keras
    traces the step (its AddN rewrite summed gradients in arrival order: runs parted past
    ~90 steps, durability.md), and leaves the options' other fields as they were."""
    import threading

    from tensorflow.core.protobuf import rewriter_config_pb2

    seen = {}

    def run():  # a fresh thread: its function options start as TensorFlow's default
        seen["before"] = _memory_optimization()
        model = ElectraPretrainer(tiny_config("train.warmup_steps=0"))
        model.compile(run_eagerly=True)
        model.fit(_dataset(batch=4), steps_per_epoch=1, epochs=1, verbose=0)
        seen["after"] = _memory_optimization()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    off = rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
    assert seen["before"][0] != off
    assert seen["after"] == (off, seen["before"][1])
