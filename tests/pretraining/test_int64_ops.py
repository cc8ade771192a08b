"""No integer Transpose in the training step or the input packing (issue 32, item 9).

oneDNN answers an int64 (or int32) Transpose with "oneDNN supports DT_INT64 only on
platforms with AVX-512. Falling back to the default Eigen-based implementation" on
stderr, on AVX-512 machines too. Keras's `take_along_axis` (keras-hub's MaskedLMHead)
and ragged concatenation (which transposes row indices) made one in every run.
"""

import tensorflow as tf
from helpers import structured_dataset, tiny_config

from electra_tf.data.inputs import pack_inputs
from electra_tf.pretraining.pretrainer import ElectraPretrainer


def _int64_transposes(concrete) -> list[str]:
    graph = concrete.graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    integers = (tf.int64.as_datatype_enum, tf.int32.as_datatype_enum)
    return [n.name for n in nodes if n.op == "Transpose" and n.attr["T"].type in integers]


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


def _packed_by_hand(a, b, length, cls=2, sep=3):
    """BERT's packing in plain Python: longest-first truncation, [CLS] A [SEP] (B [SEP])."""
    a, b = list(a), list(b) if b is not None else None
    budget = length - (3 if b is not None else 2)
    while b is not None and len(a) + len(b) > budget:
        (a if len(a) > len(b) else b).pop()
    ids = [cls, *a[:budget], sep] + ([*b, sep] if b is not None else [])
    segments = [0] * (len(a[:budget]) + 2) + ([1] * (len(b) + 1) if b is not None else [])
    pad = length - len(ids)
    return ids + [0] * pad, [1] * len(ids) + [0] * pad, segments + [0] * pad


def test_packing_equals_berts_by_hand_on_random_rows():
    import numpy as np

    rng = np.random.default_rng(0)
    for _ in range(40):
        rows, length = int(rng.integers(1, 5)), int(rng.integers(3, 12))
        a = [list(rng.integers(5, 50, size=int(rng.integers(0, 14)))) for _ in range(rows)]
        b = [list(rng.integers(5, 50, size=int(rng.integers(0, 14)))) for _ in range(rows)]
        for pair in (False, True):
            packed = pack_inputs(
                tf.ragged.constant(a, tf.int64, ragged_rank=1),
                tf.ragged.constant(b, tf.int64, ragged_rank=1) if pair else None,
                sequence_length=length, cls_id=2, sep_id=3,
            )  # fmt: skip
            expected = [_packed_by_hand(x, y if pair else None, length) for x, y in zip(a, b)]
            for k, key in enumerate(("token_ids", "padding_mask", "segment_ids")):
                assert packed[key].numpy().tolist() == [e[k] for e in expected], (key, a, b)
