"""`export --bfloat16` of a fine-tuned run: the encoder in bfloat16 from a number of real
tokens a call (every call by default), float32 below it, answering within bfloat16's
rounding of the float32 export; its weights are bfloat16 constants stored once (issue 57)."""

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from helpers import exported_classifier_and_tagger, served_ids

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS
from electra_tf.layers import kernels
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.serving import inference
from electra_tf.tasks.export import TaskServingModule
from electra_tf.tasks.text_classifier import ElectraTextClassifier
from electra_tf.tasks.text_classifier_preprocessor import ElectraTextClassifierPreprocessor

TOKENS = list(SPECIAL_TOKENS) + "the food was good bad slow ada met bob in rome ##s".split()
LONG = ["ada met bob in rome", "the food was good , bad", "romes slow"]  # 20 real tokens
SHORT = ["bob"]  # [CLS] bob [SEP]: 3 real tokens
ROWS = 8  # the bfloat16 export's threshold here


def _encoder():
    return ElectraEncoder(
        vocabulary_size=len(TOKENS), num_layers=2, hidden_dim=16, embedding_dim=16, num_heads=2,
        intermediate_dim=32, max_sequence_length=16,
    )  # fmt: skip


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """{kind: (model, {rows: (version folder, its `serve` signature)})} for a classifier and
    a tagger, each exported plain (rows None), with `bfloat16_rows=ROWS` and with 1 (every
    call in bfloat16, `export --bfloat16`'s)."""
    tf.keras.utils.set_random_seed(8)
    folder = tmp_path_factory.mktemp("bf16")
    rows = (None, ROWS, 1)
    return exported_classifier_and_tagger(folder, TOKENS, _encoder, "bfloat16_rows", rows)


@pytest.mark.parametrize("kind", ["classification", "tagging"])
def test_from_the_threshold_the_encoder_runs_in_bfloat16_and_below_it_in_float32(exports, kind):
    model, forms = exports[kind]
    plain, bf16 = forms[None][1], forms[ROWS][1]
    for texts, in_bf16 in ((LONG, True), (SHORT, False)):
        ids = served_ids(model, texts)
        assert (int(tf.reduce_sum(ids["input_mask"])) >= ROWS) == in_bf16
        a, b = np.asarray(plain(**ids)["outputs"]), np.asarray(bf16(**ids)["outputs"])
        assert b.dtype == np.float32 and b.shape == a.shape
        if in_bf16:  # bfloat16 keeps 8 significant bits: close, and not the same numbers
            gap, scale = np.abs(a - b).max(), np.abs(a).max()
            assert 0 < gap < 0.05 * scale, (gap, scale)
        else:
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-6)
        # with the threshold at 1 every call runs the bfloat16 pass: the threshold's numbers
        c = np.asarray(forms[1][1](**ids)["outputs"])
        if in_bf16:
            np.testing.assert_array_equal(c, b)
        else:
            assert 0 < np.abs(a - c).max() < 0.05 * np.abs(a).max()


def _bfloat16_constants(path) -> list:
    """(function name, shape) of every bfloat16 constant of rank 1 or more (weights, not the
    scalars of GELU or the attention scale) in a SavedModel's function library."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((path / "saved_model.pb").read_bytes())
    return [
        (function.signature.name, tuple(d.size for d in node.attr["value"].tensor.tensor_shape.dim))
        for function in saved.meta_graphs[0].graph_def.library.function
        for node in function.node_def
        if node.op == "Const"
        and node.attr["dtype"].type == tf.bfloat16.as_datatype_enum
        and node.attr["value"].tensor.tensor_shape.dim
    ]


@pytest.mark.parametrize("kind", ["classification", "tagging"])
def test_the_bfloat16_pass_holds_its_weights_as_constants_stored_once(exports, kind):
    """Every kernel and bias of the blocks is one bfloat16 constant (two lanes: the query,
    key and value columns and the feed-forward units per lane; the output kernels whole), all
    in one function that the three signatures call; the float32 export has none."""
    model, forms = exports[kind]
    encoder = model.encoder
    hidden, units, lanes = encoder.hidden_dim, encoder.intermediate_dim, 2
    per_block = sorted(
        [(hidden, 3 * hidden // lanes), (3 * hidden // lanes,)] * lanes
        + [(hidden, units // lanes), (units // lanes,)] * lanes
        + [(encoder.num_heads, hidden // encoder.num_heads, hidden), (hidden,)]
        + [(units, hidden), (hidden,)]
    )  # fmt: skip
    assert _bfloat16_constants(forms[None][0]) == []
    for rows in (ROWS, 1):
        found = _bfloat16_constants(forms[rows][0])
        assert len({name for name, _ in found}) == 1  # one function holds them all
        assert sorted(shape for _, shape in found) == sorted(per_block * encoder.num_layers)


def test_every_product_of_the_bfloat16_pass_has_its_bias(exports):
    """Each matrix product of the bfloat16 function feeds a BiasAdd (the lanes' row shares
    take `bias / L`), the form oneDNN fuses and whose constant kernel it keeps prepared."""
    from tensorflow.core.protobuf import saved_model_pb2

    path = exports["classification"][1][1][0]
    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((path / "saved_model.pb").read_bytes())
    (name,) = {name for name, _ in _bfloat16_constants(path)}
    (function,) = [
        f for f in saved.meta_graphs[0].graph_def.library.function if f.signature.name == name
    ]
    products = [n.name for n in function.node_def if n.op == "MatMul"]
    consumers = {
        i.split(":")[0]: n.op for n in function.node_def for i in n.input if n.op == "BiasAdd"
    }
    assert len(products) == 4 * 2 * 2  # 2 blocks x 2 lanes x (query-key-value, units, 2 outputs)
    assert all(consumers.get(p) == "BiasAdd" for p in products), products


def test_as_constant_writes_a_variable_into_the_graph_and_keeps_float32_as_it_is():
    variable = tf.Variable([[1.0, 2.5], [-3.0, 1.0 / 3.0]])
    assert inference.as_constant(variable, tf.float32) is variable

    @tf.function
    def doubled():
        return inference.as_constant(variable, tf.bfloat16) * 2

    graph = doubled.get_concrete_function().graph
    ops = {op.type for op in graph.get_operations()}
    assert "ReadVariableOp" not in ops and "Const" in ops
    np.testing.assert_array_equal(
        doubled().numpy().astype(np.float32),
        2 * tf.cast(tf.cast(variable, tf.bfloat16), tf.float32).numpy(),  # 1/3 rounded
    )
    variable.assign(tf.zeros([2, 2]))  # a traced graph keeps the values it saw
    assert doubled().numpy().astype(np.float32)[0, 1] == 5.0
    tensor = tf.constant([0.5])  # not a variable: a cast
    assert inference.as_constant(tensor, tf.bfloat16).dtype == tf.bfloat16


def test_the_config_records_the_threshold(exports):
    for rows, (path, _) in exports["classification"][1].items():
        config = json.loads((path / "assets.extra" / "electra_config.json").read_text())
        assert config["bfloat16_rows"] == rows


def test_the_bfloat16_pass_matches_float32_within_its_rounding_on_tiny_numbers():
    """`encoder_sequence(dtype=bfloat16)` against the float32 pass, packed and not: outputs
    are float32, within bfloat16's relative step (2**-8) of the float32 result per block."""
    tf.keras.utils.set_random_seed(3)
    encoder = _encoder()
    ids = tf.constant([[2, 7, 8, 9, 3, 0], [2, 10, 3, 0, 0, 0]], tf.int32)
    mask = tf.cast(ids > 0, tf.int32)
    encoder({"token_ids": ids, "padding_mask": mask, "segment_ids": tf.zeros_like(ids)})
    for packed in (False, True):
        args = (encoder, ids, mask, tf.zeros_like(ids))
        a = inference.encoder_sequence(*args, packed=packed).numpy()
        b = inference.encoder_sequence(*args, packed=packed, dtype=tf.bfloat16)
        assert b.dtype == tf.float32
        gap = np.abs(a - b.numpy()).max()
        assert 0 < gap < 0.1, gap  # LayerNorm's outputs are O(1): a few bfloat16 steps


def test_bad_settings_are_refused(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"{t}\n" for t in TOKENS))
    tf.keras.utils.set_random_seed(1)
    model = ElectraTextClassifier(
        _encoder(), ["a", "b"], "classification",
        ElectraTextClassifierPreprocessor(TOKENS, sequence_length=12),
    )  # fmt: skip
    model.build()
    with pytest.raises(ConfigError, match="bfloat16_rows needs the plain export"):
        TaskServingModule(model, vocab, jit_compile=True, bfloat16_rows=256)
    with pytest.raises(ConfigError, match="at least 1 token"):
        TaskServingModule(model, vocab, bfloat16_rows=0)


def test_the_cpu_check_reads_the_flags(tmp_path):
    amx, avx2 = tmp_path / "amx", tmp_path / "avx2"
    amx.write_text("processor : 0\nflags : fpu avx2 avx512f amx_bf16 amx_tile\n")
    avx2.write_text("processor : 0\nflags : fpu avx2 fma\n")
    (tmp_path / "bf16").write_text("flags : avx512f avx512_bf16\n")
    assert kernels.cpu_has_bfloat16(str(amx)) and kernels.cpu_has_bfloat16(str(tmp_path / "bf16"))
    assert not kernels.cpu_has_bfloat16(str(avx2))
    assert kernels.cpu_has_bfloat16(str(tmp_path / "missing"))  # unknown: no warning


@pytest.mark.parametrize("has_bf16", [True, False])
def test_export_bfloat16_writes_the_threshold_and_warns_on_a_cpu_without_it(
    tmp_path, capsys, monkeypatch, has_bf16
):
    from helpers import tiny_finetuned_run

    from electra_tf.cli import main
    from electra_tf.tasks.export import BFLOAT16_ROWS

    run = tiny_finetuned_run(tmp_path / "run")
    capsys.readouterr()
    monkeypatch.setattr(kernels, "cpu_has_bfloat16", lambda: has_bf16)
    out = tmp_path / "out"
    assert main(["export", "--checkpoint", str(run), "--out", str(out), "--bfloat16"]) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert printed["bfloat16"] is True
    config = json.loads(
        (Path(printed["written"]) / "assets.extra" / "electra_config.json").read_text()
    )
    assert config["bfloat16_rows"] == BFLOAT16_ROWS == 1
    assert ("this CPU has no bfloat16 instructions" in captured.err) is not has_bf16


def test_a_question_answering_export_in_bfloat16_answers_close_to_float32(tmp_path):
    """The span head reads the bfloat16 pass's per-token outputs (float32): the same outputs
    and answers from the contexts, scores within bfloat16's rounding of float32's."""
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    tf.keras.utils.set_random_seed(4)
    preprocessor = ElectraQuestionAnswererPreprocessor(
        TOKENS, sequence_length=16, doc_stride=4, max_query_length=6
    )
    model = ElectraQuestionAnswerer(_encoder(), preprocessor, n_best=5, max_answer_length=4)
    model.build()
    questions = ["who met bob", "where is ada", "the food"]
    contexts = ["ada met bob in rome", "the food was good , bad and slow in rome", "romes"]
    got = {}
    for rows in (None, 1):
        folder = export_finetuned(
            model, {"pair": True}, tmp_path / str(rows), model_name="qa", warmup=False,
            bfloat16_rows=rows,
        )  # fmt: skip
        served = tf.saved_model.load(str(folder)).signatures["serving_default"]
        got[rows] = served(question=tf.constant(questions), context=tf.constant(contexts))
    assert set(got[1]) == set(got[None])
    for i, context in enumerate(contexts):
        start, end = int(got[1]["start"][i]), int(got[1]["end"][i])
        assert context[start:end] == got[1]["answer"][i].numpy().decode()
    a, b = np.asarray(got[None]["score"]), np.asarray(got[1]["score"])
    assert 0 < np.abs(a - b).max() < 0.05 * max(1.0, np.abs(a).max()), (a, b)
