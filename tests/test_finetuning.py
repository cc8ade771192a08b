"""Fine-tuning: heads, readers in the official formats, metrics by hand, layer-wise rates, a run."""

import json

import keras
import numpy as np
import pytest

from electra_tf.config import ConfigError
from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.finetuning import metrics
from electra_tf.finetuning.config import FinetuneConfig, load_finetune_recipe
from electra_tf.finetuning.init import Initialization, load_initialization
from electra_tf.finetuning.optimizer import LayerwiseAdamW, layerwise_multipliers
from electra_tf.finetuning.readers import (
    MOVIE_REVIEW_SEED,
    ReadReport,
    movie_review_split,
    read_glue_tsv,
    read_movie_reviews,
)
from electra_tf.finetuning.run import finetune
from electra_tf.finetuning.squad import best_spans, make_features, predict_answers, read_squad
from electra_tf.finetuning.tasks import TASKS, get_task
from electra_tf.models.encoder import ElectraEncoder
from electra_tf.models.finetuning import ElectraClassifier, ElectraSpanExtractor

ENCODER = dict(
    vocabulary_size=40,
    num_layers=2,
    hidden_dim=8,
    embedding_dim=8,
    num_heads=2,
    intermediate_dim=16,
    max_sequence_length=32,
)


def _inputs(batch=2, length=6):
    ids = np.tile(np.arange(5, 5 + length, dtype=np.int32), (batch, 1))
    ids[:, 0] = 2
    mask = np.ones_like(ids)
    mask[1, 4:] = 0
    return {"token_ids": ids, "padding_mask": mask, "segment_ids": np.zeros_like(ids)}


# Heads ---------------------------------------------------------------------------------------


def test_classifier_is_dense_on_the_cls_vector_and_regression_squeezes():
    encoder = ElectraEncoder(**ENCODER)
    model = ElectraClassifier(encoder, num_outputs=3)
    x = _inputs()
    logits = np.asarray(model(x, training=False))
    cls = np.asarray(encoder(x, training=False))[:, 0]
    expected = cls @ model.output_dense.kernel.numpy() + model.output_dense.bias.numpy()
    np.testing.assert_allclose(logits, expected, atol=1e-6)
    regression = ElectraClassifier(encoder, num_outputs=1)
    assert tuple(regression(x).shape) == (2,)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(np.array([0, 2]), logits)
    by_hand = np.mean([-np.log(np.exp(r[t]) / np.exp(r).sum()) for r, t in zip(logits, (0, 2))])
    assert float(loss) == pytest.approx(by_hand, rel=1e-5)


def test_span_heads_mask_padding_and_joint_head_pairs_starts_with_ends():
    encoder = ElectraEncoder(**ENCODER)
    plain = ElectraSpanExtractor(encoder)
    out = plain(_inputs())
    assert tuple(out["start_logits"].shape) == (2, 6) and tuple(out["answerable_logits"].shape) == (
        2,
    )
    assert np.all(np.asarray(out["end_logits"])[1, 4:] < -1000)  # padding can never be chosen
    joint = ElectraSpanExtractor(encoder, joint_end=True, beam_size=3)
    trained = joint({**_inputs(), "start_positions": np.array([1, 2], np.int32)})
    assert tuple(trained["end_logits"].shape) == (2, 6)
    inferred = joint(_inputs())
    assert tuple(inferred["end_logits"].shape) == (2, 3, 6)
    starts = np.asarray(inferred["start_candidates"])
    # The beam's first end row equals the end logits given that start.
    given = joint({**_inputs(), "start_positions": starts[:, 0]})
    np.testing.assert_allclose(
        np.asarray(inferred["end_logits"])[:, 0], np.asarray(given["end_logits"]), atol=1e-5
    )


# Metrics against answers worked out by hand ----------------------------------------------------


def test_classification_metrics_by_hand():
    labels = [1, 1, 1, 0, 0, 0, 0, 1]
    predictions = [1, 1, 0, 0, 0, 1, 0, 1]
    # tp=3 fn=1 fp=1 tn=3
    assert metrics.accuracy(labels, predictions) == 6 / 8
    assert metrics.f1_binary(labels, predictions) == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))
    assert metrics.matthews_corrcoef(labels, predictions) == pytest.approx((9 - 1) / 16)
    assert metrics.matthews_corrcoef([1, 1, 0], [1, 1, 1]) == 0.0  # undefined: 0
    assert metrics.f1_binary([0, 0], [0, 0]) == 0.0


def test_correlations_by_hand():
    x, y = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 9.0]
    # Pearson: centred x = (-1.5 -.5 .5 1.5), y = (-3 -1 0 4): sum xy = 4.5+.5+0+6 = 11,
    # sum x^2 = 5, sum y^2 = 26.
    assert metrics.pearson(x, y) == pytest.approx(11 / np.sqrt(5 * 26))
    assert metrics.spearman(x, y) == pytest.approx(1.0)
    # Ties share the average rank: y ranks (1, 2.5, 2.5, 4).
    assert metrics.spearman([1, 2, 3, 4], [0, 5, 5, 9]) == pytest.approx(
        metrics.pearson([1, 2, 3, 4], [1, 2.5, 2.5, 4])
    )
    assert metrics.spearman([3, 1, 2], [1, 3, 2]) == pytest.approx(-1.0)


def test_squad_metrics_with_normalization_and_no_answers():
    assert metrics.normalize_answer("The  Denver Broncos!") == "denver broncos"
    assert metrics.squad_exact_match("denver broncos", ["The Denver Broncos."]) == 1.0
    # F1: prediction "the broncos won" -> [broncos, won]; gold "Denver Broncos" -> [denver,
    # broncos]; one common token: P = 1/2, R = 1/2, F1 = 1/2.
    assert metrics.squad_f1("the broncos won", ["Denver Broncos"]) == pytest.approx(0.5)
    assert metrics.squad_f1("x", ["Denver Broncos", "x"]) == 1.0  # best gold answer
    assert metrics.squad_exact_match("", []) == 1.0 and metrics.squad_f1("", []) == 1.0
    assert metrics.squad_exact_match("something", []) == 0.0 and metrics.squad_f1("it", []) == 0.0
    scores = metrics.squad_scores(
        {"a": "Denver", "b": "", "c": "wrong"}, {"a": ["Denver"], "b": [], "c": ["right answer"]}
    )
    assert scores["exact"] == pytest.approx(200 / 3) and scores["HasAns_total"] == 2
    assert scores["NoAns_exact"] == 100.0 and scores["HasAns_f1"] == pytest.approx(50.0)


# Readers on files in the official formats -------------------------------------------------------


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_glue_readers_in_the_official_layouts(tmp_path):
    cola = _write(
        tmp_path / "cola.tsv",
        ["gj04\t1\t\tThe book was read.", "gj04\t0\t*\tRead book the was.", "short\trow"],
    )
    report = ReadReport()
    examples = read_glue_tsv(TASKS["cola"], cola, report)
    assert [(e.text_a, e.text_b, e.label) for e in examples] == [
        ("The book was read.", None, 1),
        ("Read book the was.", None, 0),
    ]
    assert report.skipped == {"rows_with_missing_columns": 1}
    mrpc = _write(
        tmp_path / "mrpc.tsv",
        [
            "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String",
            "1\t1\t2\tHe said hi.\tHe greeted us.",
            "0\t3\t4\tA cat.\t",
        ],
    )
    report = ReadReport()
    examples = read_glue_tsv(TASKS["mrpc"], mrpc, report)
    assert [(e.text_a, e.text_b, e.label) for e in examples] == [
        ("He said hi.", "He greeted us.", 1)
    ]
    assert report.skipped == {"empty_text": 1}
    header = (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    )
    stsb = _write(
        tmp_path / "stsb.tsv",
        [header, "0\tmain\tx\t2012\t1\ta\tb\tA man plays.\tA man is playing.\t4.75"],
    )
    assert read_glue_tsv(TASKS["stsb"], stsb)[0].label == 4.75
    mnli_header = (
        "index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
        "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label"
    )
    mnli = _write(
        tmp_path / "dev_matched.tsv",
        [
            mnli_header,
            "0\t1\t1a\tfiction\t(x)\t(y)\t(X)\t(Y)\tIt rains.\tIt is wet.\tentailment\tentailment",
        ],
    )
    assert read_glue_tsv(TASKS["mnli"], mnli)[0].label == TASKS["mnli"].labels.index("entailment")
    rte = _write(
        tmp_path / "rte.tsv",
        [
            "index\tsentence1\tsentence2\tlabel",
            "0\tA dog barks.\tAn animal makes noise.\tentailment",
            "1\tX.\tY.\tmaybe",
        ],
    )
    with pytest.raises(ConfigError, match=r"rte.tsv, line 3: label 'maybe' is not one of rte's"):
        read_glue_tsv(TASKS["rte"], rte)
    wrong = _write(tmp_path / "qnli.tsv", ["index\tquestion\tanswer\tlabel", "0\tq\ta\tentailment"])
    with pytest.raises(ConfigError, match="line 1: the header has no 'sentence' column"):
        read_glue_tsv(TASKS["qnli"], wrong)
    with pytest.raises(ConfigError, match="does not exist"):
        read_glue_tsv(TASKS["sst2"], tmp_path / "missing.tsv")
    assert get_task("SST-2") is TASKS["sst2"] and get_task("sts-b") is TASKS["stsb"]


def test_movie_review_split_is_fixed_and_documented(tmp_path):
    rows = [f"{i}_1\t{(i % 9) - 4:.1f}\tSnippet number {i}." for i in range(100)]
    path = _write(tmp_path / "movieReviewSnippets_GroundTruth.txt", rows + ["bad row"])
    report = ReadReport()
    data = read_movie_reviews(path, report)
    assert len(data) == 100 and report.skipped == {"rows_with_missing_columns": 1}
    binary = movie_review_split(data, TASKS["movie_reviews"])
    regression = movie_review_split(data, TASKS["movie_ratings"])
    assert [len(regression[s]) for s in ("train", "dev", "test")] == [80, 10, 10]
    zeros = sum(1 for i in range(100) if (i % 9) - 4 == 0)
    assert sum(len(v) for v in binary.values()) == 100 - zeros
    order = np.random.default_rng(MOVIE_REVIEW_SEED).permutation(100)
    assert {e.guid for e in regression["dev"]} == {f"dev-{i}" for i in order[80:90]}
    assert all(
        e.label == int(float(rows[int(e.guid.split("-")[1])].split("\t")[1]) > 0)
        for e in binary["train"]
    )


def _scratch_init(vocabulary_size, vocab_file):
    """A from-scratch, dropout-free 2-layer encoder (hidden 16) for the toy fine-tunes."""
    encoder = {
        **ENCODER,
        "vocabulary_size": vocabulary_size,
        "hidden_dim": 16,
        "num_heads": 2,
        "intermediate_dim": 32,
        "dropout": 0.0,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-12,
        "num_segments": 2,
    }
    return Initialization("scratch", encoder, None, str(vocab_file))


def _shuffle_warnings(recorded):
    """Keras's "`shuffle=True` was passed, but will be ignored" warnings among `recorded`.

    Our datasets shuffle themselves, so `fit` must not be told to.
    """
    return [w for w in recorded if "shuffle=True" in str(w.message)]


# SQuAD -----------------------------------------------------------------------------------------


SQUAD = {
    "version": "v2.0",
    "data": [
        {
            "title": "t",
            "paragraphs": [
                {
                    "context": "The Broncos beat the Panthers in Santa Clara. "
                    "Denver won its third title.",
                    "qas": [
                        {
                            "id": "q1",
                            "question": "Who beat the Panthers?",
                            "is_impossible": False,
                            "answers": [{"text": "The Broncos", "answer_start": 0}],
                        },
                        {
                            "id": "q2",
                            "question": "Where was the game?",
                            "is_impossible": False,
                            "answers": [{"text": "Santa Clara", "answer_start": 33}],
                        },
                        {"id": "q3", "question": "Who sang?", "is_impossible": True, "answers": []},
                        {
                            "id": "q4",
                            "question": "Broken?",
                            "is_impossible": False,
                            "answers": [{"text": "Seattle", "answer_start": 5}],
                        },
                    ],
                }
            ],
        }
    ],
}


def _squad_tokenizer(tmp_path):
    words = (
        "the broncos beat panthers in santa clara . denver won its third title who ? where "
        "was game sang broken"
    ).split()
    return ElectraTokenizer(write_vocabulary(list(SPECIAL_TOKENS) + words, tmp_path / "v.txt"))


def test_squad_fine_tune_memorises_the_toy_questions(tmp_path, recwarn):
    # finetune_squad end to end (reader, windows, span model, training, decoding, EM/F1) on
    # the toy file as both train and dev: q1 and q2 have spans, q3 has none, q4's answer
    # is not in its context and is skipped in training. A from-scratch encoder can learn
    # the three questions by heart.
    from electra_tf.finetuning.squad import finetune_squad

    path = tmp_path / "toy-v2.0.json"
    path.write_text(json.dumps(SQUAD))
    tokenizer = _squad_tokenizer(tmp_path)
    init = _scratch_init(len(tokenizer.vocabulary), tmp_path / "v.txt")
    config = FinetuneConfig(
        task="squad2",
        learning_rate=1e-2,
        layerwise_decay=1.0,
        epochs=200,
        batch_size=4,
        max_seq_length=32,
        dropout=0.0,
    )
    report = finetune_squad(init, config, path, path, True, tmp_path / "out", progress=None)
    losses = report["runs"][0]["train_loss"]
    assert losses[-1] < 0.1 * losses[0]
    # Dev counts q4 too, whose answer ("Seattle") is not in its context: 3 of 4 right.
    summary = report["summary"]
    assert summary["dev/exact"]["median"] == 75.0 and summary["dev/f1"]["median"] == 75.0
    assert summary["dev/HasAns_exact"]["median"] == pytest.approx(200 / 3)  # q1, q2 of 3
    assert summary["dev/NoAns_exact"]["median"] == 100.0  # q3 left unanswered
    assert report["skipped_questions"] == ["q4"]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["runs"] == report["runs"]
    assert not _shuffle_warnings(recwarn)


def test_squad_reader_windows_and_answer_mapping(tmp_path):
    path = tmp_path / "dev-v2.0.json"
    path.write_text(json.dumps(SQUAD))
    report = {}
    import collections

    report = collections.Counter()
    examples = read_squad(path, version_2=True, report=report)
    assert [e.qid for e in examples] == ["q1", "q2", "q3", "q4"]
    assert report["answers_not_in_context"] == 1 and report["skipped:q4"] == 1
    assert (examples[1].start_word, examples[1].end_word) == (6, 7)  # "Santa", "Clara."
    tokenizer = _squad_tokenizer(tmp_path)
    # 14 context tokens, question <= 4: windows of 16 - 4 - 3 = 9 tokens, stride 4.
    features = make_features(
        examples[:3], tokenizer, max_seq_length=16, doc_stride=4, max_query_length=4
    )
    windows = np.bincount(features.example_index)
    assert windows.tolist() == [3, 3, 3]
    q2 = np.where(features.example_index == 1)[0]
    assert features.answerable[q2].tolist() == [1.0, 1.0, 0.0]  # "santa clara" in windows 0, 1
    w = q2[0]
    ids = features.inputs["token_ids"][w]
    assert tokenizer.vocabulary[ids[features.start_positions[w]]] == "santa"
    assert tokenizer.vocabulary[ids[features.end_positions[w]]] == "clara"
    assert features.start_positions[np.where(features.example_index == 2)[0]].tolist() == [0, 0, 0]
    # Logits peaked at each answer give it back in the original spelling.
    outputs = {
        "start_logits": np.full((len(ids) * 0 + len(features.example_index), 16), -5.0),
        "end_logits": np.full((len(features.example_index), 16), -5.0),
        "answerable_logits": np.full(len(features.example_index), 3.0),
    }
    for i in range(len(features.example_index)):
        if features.answerable[i]:
            outputs["start_logits"][i, features.start_positions[i]] = 5.0
            outputs["end_logits"][i, features.end_positions[i]] = 5.0
    outputs["answerable_logits"][np.where(features.example_index == 2)[0]] = -3.0
    answers = predict_answers(examples[:3], features, outputs, version_2=True)
    assert answers == {"q1": "The Broncos", "q2": "Santa Clara", "q3": ""}


def test_best_spans_respect_length_order_and_context():
    start = np.array([0.0, 3.0, 1.0, 0.5])
    end = np.array([0.0, 0.2, 2.0, 4.0])
    mapping = {1: 0, 2: 1, 3: 2}
    context = {1: True, 2: True, 3: True}
    spans = best_spans(start, end, mapping, context, n_best=4, max_answer_length=2)
    # (1, 3) would score 7 but is 3 tokens long; (1, 2) scores 5; (3, 3) 4.5; (2, 3) 5.
    assert spans[0][1:] in [(1, 2), (2, 3)] and spans[0][0] == 5.0
    assert all(e - s + 1 <= 2 and e >= s and s in mapping for _, s, e in spans)


# Layer-wise learning rates -----------------------------------------------------------------------


def test_layerwise_rates_for_a_two_layer_model_by_hand():
    model = ElectraClassifier(ElectraEncoder(**{**ENCODER, "embedding_dim": 4}), num_outputs=2)
    model.build()
    decay = 0.5
    paper = layerwise_multipliers(model, decay)
    reference = layerwise_multipliers(model, decay, reference=True)
    enc = model.encoder
    groups = {
        "embeddings": (
            enc.embeddings.trainable_variables + enc.embeddings_project.trainable_variables,
            0.125,
            0.0625,
        ),
        "layer_0": (enc.transformer_layers[0].trainable_variables, 0.25, 0.125),
        "layer_1": (enc.transformer_layers[1].trainable_variables, 0.5, 0.25),
        "head": (model.output_dense.trainable_variables, 1.0, 1.0),
    }
    for name, (variables, paper_rate, reference_rate) in groups.items():
        for v in variables:
            assert paper[id(v)] == paper_rate, name
            assert reference[id(v)] == reference_rate, name
    assert set(paper) == {id(v) for v in model.trainable_variables}


def test_layerwise_optimizer_scales_each_update():
    model = ElectraClassifier(ElectraEncoder(**ENCODER), num_outputs=2)
    model.build()
    multipliers = layerwise_multipliers(model, 0.5)
    optimizer = LayerwiseAdamW(
        multipliers=multipliers,
        learning_rate=0.1,
        weight_decay=0.0,
        clip_norm=0.0,
        bias_correction=False,
        beta_1=0.0,
        beta_2=0.0,
        epsilon=1e-12,
    )
    before = [v.numpy().copy() for v in model.trainable_variables]
    grads = [np.ones(v.shape, "float32") for v in model.trainable_variables]
    optimizer.apply(grads, model.trainable_variables)
    # With beta 0 and no bias correction, each step is lr * multiplier * sign(g).
    for b, v in zip(before, model.trainable_variables):
        np.testing.assert_allclose(b - v.numpy(), 0.1 * multipliers[id(v)], rtol=1e-5)


# Configs and a real fine-tuning run ---------------------------------------------------------------


def test_recipes_and_paper_values():
    config = load_finetune_recipe("rte")
    assert config.epochs == 10 and config.task == "rte"
    small = FinetuneConfig().resolved(hidden_dim=256, task_epochs=3)
    large = FinetuneConfig().resolved(hidden_dim=1024, task_epochs=3)
    assert (small.learning_rate, small.layerwise_decay, small.epochs) == (3e-4, 0.8, 3)
    assert (large.learning_rate, large.layerwise_decay) == (5e-5, 0.9)
    assert FinetuneConfig().resolved(768, 3).learning_rate == 1e-4
    assert FinetuneConfig().resolved(128, 3).learning_rate == 1e-3  # tiny, not in the paper
    assert FinetuneConfig().override("learning_rate=2e-5", "seeds=3").seeds == 3
    with pytest.raises(ConfigError, match="has no field 'learning_rat'"):
        FinetuneConfig().override("learning_rat=1")


def _toy_task(tmp_path, n=160, seed=0):
    rng = np.random.default_rng(seed)
    positive, negative = ["good", "great", "fine"], ["bad", "awful", "poor"]
    neutral = ["the", "movie", "was", "plot", "actors", "very", "and"]
    rows = []
    for _ in range(n):
        label = int(rng.random() < 0.4)  # majority class: 0 (60%)
        words = list(rng.choice(neutral, size=5)) + [rng.choice(positive if label else negative)]
        rng.shuffle(words)
        rows.append(f"{' '.join(words)}\t{label}")
    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + positive + negative + neutral, tmp_path / "v.txt"
    )
    train = _write(tmp_path / "train.tsv", ["sentence\tlabel", *rows[: n * 3 // 4]])
    dev = _write(tmp_path / "dev.tsv", ["sentence\tlabel", *rows[n * 3 // 4 :]])
    return vocab, train, dev


def test_a_short_fine_tune_beats_the_majority_class(tmp_path, recwarn):
    vocab, train, dev = _toy_task(tmp_path)
    task = TASKS["sst2"]
    data = {"train": read_glue_tsv(task, train), "dev": read_glue_tsv(task, dev)}
    majority = max(
        np.mean([e.label for e in data["dev"]]), 1 - np.mean([e.label for e in data["dev"]])
    )
    init = _scratch_init(18, vocab)
    # A from-scratch post-LayerNorm encoder sits on a plateau at small rates; 1e-2 without
    # layer-wise decay leaves it within a few epochs.
    config = FinetuneConfig(
        learning_rate=1e-2,
        layerwise_decay=1.0,
        epochs=10,
        batch_size=16,
        seeds=2,
        max_seq_length=16,
    )
    report = finetune(task, init, data, config, output_dir=tmp_path / "out", progress=None)
    accuracy = report["summary"]["dev/accuracy"]
    assert accuracy["median"] > majority + 0.15 and accuracy["n"] == 2
    assert report["runs"][0]["train_loss"][-1] < report["runs"][0]["train_loss"][0]
    table = (tmp_path / "out" / "results.md").read_text()
    assert "dev/accuracy" in table and "median" in table
    assert (
        json.loads((tmp_path / "out" / "results.json").read_text())["summary"] == report["summary"]
    )
    assert not _shuffle_warnings(recwarn)


def test_initialization_sources_agree(tmp_path):
    from helpers import tiny_config

    from electra_tf.pretraining.checkpoint import save_pretrainer
    from electra_tf.pretraining.pretrainer import ElectraPretrainer
    from electra_tf.serving.hub import export_hub
    from electra_tf.serving.importers import export_hugging_face
    from electra_tf.serving.keras_hub_preset import write_keras_hub_preset
    from electra_tf.serving.saved_model import export_for_serving

    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + [f"w{i}" for i in range(59)], tmp_path / "v.txt"
    )
    model = ElectraPretrainer(tiny_config(f"data.vocab_file={vocab}", "model.num_layers=2"))
    save_pretrainer(model, tmp_path / "run")
    export_for_serving(model, tmp_path / "serving", vocab_file=vocab, warmup=False)
    export_hub(model, tmp_path / "hub", vocab_file=vocab, with_mlm=False)
    write_keras_hub_preset(model, tmp_path / "preset", vocab_file=vocab)
    hf = export_hugging_face(model, tmp_path / "hf")
    expected = [w.numpy() for w in model.discriminator.encoder.weights]
    sources = [
        tmp_path / "run",
        tmp_path / "serving" / "electra" / "1",
        tmp_path / "hub" / "encoder",
        tmp_path / "preset",
        hf["discriminator"],
    ]
    for source in sources:
        init = load_initialization(str(source), vocab_file=str(vocab))
        assert len(init.weights) == len(expected), source
        for got, want in zip(init.weights, expected):
            np.testing.assert_allclose(got, want, atol=1e-6, err_msg=str(source))
    scratch = load_initialization("scratch:tiny", vocab_file=str(vocab))
    assert scratch.weights is None and scratch.encoder_config["vocabulary_size"] == 64
    with pytest.raises(ConfigError, match="needs a vocabulary"):
        load_initialization("scratch:tiny")


def test_roc_auc_by_hand_with_ties():
    from electra_tf.finetuning.metrics import roc_auc

    # Pairs (positive, negative): (0.5, 0.5) counts 1/2, the other three 1: 3.5 / 4.
    assert roc_auc([0, 1, 0, 1], [0.5, 0.5, 0.2, 0.9]) == 0.875
    assert roc_auc([1, 1, 0], [0.1, 0.2, 0.3]) == 0.0
    assert np.isnan(roc_auc([1, 1], [0.1, 0.2]))
