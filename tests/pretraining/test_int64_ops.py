"""No int64 Transpose in the training step or the input packing (issue 32, item 9).

oneDNN answers an int64 Transpose with "oneDNN supports DT_INT64 only on platforms
with AVX-512. Falling back to the default Eigen-based implementation" on stderr, on
AVX-512 machines too. Keras's `take_along_axis` (keras-hub's MaskedLMHead) and
ragged concatenation with int64 row splits made one in every run.
"""

import tensorflow as tf
from helpers import structured_dataset, tiny_config

from electra_tf.data.inputs import pack_inputs
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _int64_transposes(concrete) -> list[str]:
    graph = concrete.graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    int64 = tf.int64.as_datatype_enum
    return [n.name for n in nodes if n.op == "Transpose" and n.attr["T"].type == int64]


def test_the_training_step_has_no_int64_transpose():
    model = ElectraPretrainer(tiny_config())
    model.compile()
    batch = next(iter(structured_dataset()))
    assert _int64_transposes(tf.function(model.train_step).get_concrete_function(batch)) == []


def test_packing_one_or_two_segments_has_no_int64_transpose():
    spec = tf.RaggedTensorSpec([None, None], tf.int64, ragged_rank=1)

    def pack(a, b):
        return pack_inputs(a, b, sequence_length=8, cls_id=2, sep_id=3)

    def pack_one(a):
        return pack_inputs(a, sequence_length=8, cls_id=2, sep_id=3)

    assert _int64_transposes(tf.function(pack).get_concrete_function(spec, spec)) == []
    assert _int64_transposes(tf.function(pack_one).get_concrete_function(spec)) == []


def test_the_generator_head_equals_keras_hubs_masked_lm_head():
    import keras
    import keras_hub
    import numpy as np

    from electra_tf.models.generator import _GatheringMaskedLMHead

    embedding = keras.layers.ReversibleEmbedding(20, 8)
    embedding.build((None,))
    heads = [
        cls(token_embedding=embedding, intermediate_activation="gelu", name="head")
        for cls in (keras_hub.layers.MaskedLMHead, _GatheringMaskedLMHead)
    ]
    for head in heads:
        head.build((None, None, 8), (None, None))
    for target, source in zip(heads[1].weights, heads[0].weights, strict=True):
        target.assign(np.random.default_rng(0).normal(size=source.shape) + source.numpy())
        source.assign(target.numpy())
    sequence = tf.random.stateless_normal((3, 7, 8), seed=[1, 2])
    positions = tf.constant([[0, 6], [3, 3], [5, 1]])
    theirs, ours = (head(sequence, mask_positions=positions) for head in heads)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6)
