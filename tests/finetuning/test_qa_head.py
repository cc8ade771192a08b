"""The question answerer's 2.0 head choices (issue 55): the answerability loss weight and the
no-answer rule, "answerability" (the reference's logit) or "null_score" (transformers'),
in `squad.answer_details`, the Keras model, the config and the SavedModel."""

import math

import keras
import numpy as np
import pytest
from helpers import scratch_init_one_layer
from test_question_answering import WORDS, _savedmodel_answers_as_keras, _toy, _write_squad

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets import squad
from electra_tf.tasks.config import FinetuneConfig


def _two_windows():
    """ "Ada lives in Rome ." in two windows: window 0 holds words 0-3 at positions 1-4,
    window 1 words 2-3 at positions 1-2 (both of most context for their words)."""
    example, problem = squad.squad_example("q", "where?", "Ada lives in Rome .", ["Rome"], None)
    assert problem is None
    at = [{1: 0, 2: 1, 3: 2, 4: 3}, {1: 2, 2: 3}]
    features = squad.SquadFeatures(
        {}, None, None, None, np.array([0, 0]), at, [{p: True for p in a} for a in at]
    )
    return example, features


def test_the_null_score_rule_worked_example():
    example, features = _two_windows()
    # Window 0: [CLS] 2.0 + 1.0 = null 3.0, best span "Rome" (4, 4) 1.5 + 1.0 = 2.5.
    # Window 1: null 0.5 + 0.5 = 1.0, best span "Rome" (2, 2) 3.0 + 1.0 = 4.0.
    start = np.array([[2.0, 0.0, 0.0, 0.0, 1.5], [0.5, 0.0, 3.0, -9.0, -9.0]])
    end = np.array([[1.0, 0.0, 0.0, 0.0, 1.0], [0.5, 0.0, 1.0, -9.0, -9.0]])
    outputs = {
        "start_logits": start,
        "end_logits": end,
        "answerable_logits": np.array([-5.0, -6.0]),
    }
    assert squad.null_scores(outputs, [0, 1]) == [3.0, 1.0]
    # transformers': best span over the windows minus the smallest null = 4.0 - 1.0 = 3.0.
    null = squad.answer_details([example], features, outputs, True, no_answer="null_score")["q"]
    assert null["answerable_logit"] == pytest.approx(3.0)
    assert null["no_answer"] == pytest.approx(1 / (1 + math.exp(3.0)))
    assert null["answer"] == "Rome"  # 3.0 >= threshold 0.0
    assert squad.with_threshold({"q": null}, 2.9)["q"]["answer"] == "Rome"
    assert squad.with_threshold({"q": null}, 3.1)["q"]["answer"] == ""
    # The reference's rule on the same outputs: the best answerability logit, -5.0: none.
    logit = squad.answer_details([example], features, outputs, True)["q"]
    assert logit["answerable_logit"] == pytest.approx(-5.0) and logit["answer"] == ""
    assert logit["span"] == null["span"]  # the rule decides only whether to answer


def _model(**head):
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    keras.utils.set_random_seed(0)
    tokens = [*SPECIAL_TOKENS, *WORDS, "."]
    encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=1, hidden_dim=8,
        embedding_dim=8, num_heads=2, intermediate_dim=16, max_sequence_length=32,
        dropout=0.0)  # fmt: skip
    preprocessor = ElectraQuestionAnswererPreprocessor(tokens, sequence_length=32)
    model = ElectraQuestionAnswerer(encoder, preprocessor, version_2=True, dropout=0.0, **head)
    model.build()
    return model


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_answerable_loss_weight_zero_leaves_the_answerability_head_untrained(weight):
    model = _model(answerable_loss_weight=weight)
    assert model.default_loss_weights()["answerable_logits"] == weight
    head = [w.numpy().copy() for layer in (model.answer_hidden, model.answer_dense)
            for w in layer.weights]  # fmt: skip
    start = model.start_dense.kernel.numpy().copy()
    rows = _toy(16, 0)  # answerable and unanswerable questions
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    model.fit(([r["question"] for r in rows], [r["context"] for r in rows]),
              [r["answers"] for r in rows], epochs=1, batch_size=16, seed=0, verbose=0)  # fmt: skip
    after = [w.numpy() for layer in (model.answer_hidden, model.answer_dense)
             for w in layer.weights]  # fmt: skip
    moved = [not np.array_equal(a, b) for a, b in zip(head, after, strict=True)]
    assert not np.array_equal(start, model.start_dense.kernel.numpy())  # the spans trained
    assert moved == [weight > 0] * 4  # the answerability head: only with its loss


def test_the_head_settings_round_trip_through_keras_saving(tmp_path):
    model = _model(answerable_loss_weight=0.0, no_answer="null_score")
    model.save(tmp_path / "qa.keras")
    loaded = keras.saving.load_model(tmp_path / "qa.keras")
    assert (loaded.no_answer, loaded.answerable_loss_weight) == ("null_score", 0.0)
    assert loaded.default_loss_weights()["answerable_logits"] == 0.0


def test_bad_head_settings_are_one_sentence():
    with pytest.raises(ConfigError, match='no_answer must be "answerability" or "null_score", '
                       "got 'null'"):  # fmt: skip
        FinetuneConfig(no_answer="null")
    with pytest.raises(ConfigError, match="needs the plain head: set joint_end=false"):
        FinetuneConfig(no_answer="null_score", joint_end=True)
    with pytest.raises(ConfigError, match="answerable_loss_weight must be >= 0, got -1.0"):
        FinetuneConfig(answerable_loss_weight=-1.0)
    with pytest.raises(ValueError, match="got 'nul'"):
        _model(no_answer="nul")
    config = FinetuneConfig().override("no_answer=null_score", "answerable_loss_weight=0")
    assert (config.no_answer, config.answerable_loss_weight) == ("null_score", 0.0)


def test_each_recipe_gives_its_qa_head_and_the_joint_head_keeps_the_reference():
    """Unset, the QA head comes from the defaults: standard, BertForQuestionAnswering's (span
    loss only, the null-score rule); paper, the reference code's; the joint end head takes
    the reference's under either, and a setting given is kept."""

    def head(config):
        config = config.resolved(256, 2)
        return config.answerable_loss_weight, config.no_answer, config.span_head_init

    assert FinetuneConfig().no_answer is None  # unset until resolved
    standard = head(FinetuneConfig())
    assert standard[:2] == (0.0, "null_score")
    assert head(FinetuneConfig(defaults="paper")) == (1.0, "answerability", "truncated_normal")
    assert head(FinetuneConfig(joint_end=True)) == (1.0, "answerability", "truncated_normal")
    assert head(FinetuneConfig(answerable_loss_weight=0.5)) == (0.5, *standard[1:])
    assert head(FinetuneConfig(defaults="paper", no_answer="null_score"))[1] == "null_score"


@pytest.mark.slow
def test_the_savedmodel_answers_as_the_keras_model_under_the_null_score_rule(tmp_path):
    """The in-graph null-score rule equals the Python path (several windows per question;
    the threshold at the median, so some are answered and some not). Slow: one export,
    about 55 CPU s (96 s wall under the shared machine's load)."""
    _savedmodel_answers_as_keras(tmp_path, ((True, None, False, "null_score"),))


def test_a_run_trains_and_keeps_the_transformers_style_head(tmp_path):
    """`--answerable-loss-weight 0 --no-answer null_score` through the engine: the kept
    model carries both, and the run's dev threshold is the null-score rule's best one."""
    from electra_tf.finetuning import user_task
    from electra_tf.tasks.model_folder import load_finetuned
    from electra_tf.tasks.question_answerer_preprocessor import as_examples

    vocab = write_vocabulary([*SPECIAL_TOKENS, *WORDS, "."], tmp_path / "vocab.txt")
    init = scratch_init_one_layer(len(SPECIAL_TOKENS) + len(WORDS) + 1, vocab)  # one layer
    train = _write_squad(tmp_path / "train.json", _toy(32, 0))
    dev_rows = _toy(16, 1)
    dev = _write_squad(tmp_path / "dev.json", dev_rows)
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        report = user_task.finetune_files(
            "scratch", train=train, dev=dev, output_dir=tmp_path / "run", progress=None,
            overrides=("epochs=1", "batch_size=16", "max_seq_length=32", "max_query_length=16",
                       "answerable_loss_weight=0", "no_answer=null_score"),
        )  # fmt: skip
    finally:
        user_task.load_initialization = original
    model, _ = load_finetuned(tmp_path / "run")
    assert (model.no_answer, model.answerable_loss_weight) == ("null_score", 0.0)
    columns = ([r[k] for r in dev_rows] for k in ("question", "context", "answers"))
    examples, _ = as_examples(*columns)
    references = {e.qid: e.answers for e in examples}
    threshold, f1 = squad.best_threshold(model.answer_details(examples), references)
    assert report["runs"][0]["dev"]["threshold"] == pytest.approx(threshold, abs=1e-4)
    assert report["runs"][0]["dev"]["f1"] == pytest.approx(f1, abs=1e-3)
    model.no_answer = "answerability"  # the untrained head's logit: another threshold
    other, _ = squad.best_threshold(model.answer_details(examples), references)
    assert abs(other - threshold) > 1e-3


@pytest.mark.parametrize("law", ["truncated_normal", "normal"])
def test_the_span_head_init_law_is_the_one_asked_for(tmp_path, law):
    """`span_head_init`: the reference's truncated normal (nothing beyond 2 stddev, so its
    spread is 0.88 stddev) or `BertForQuestionAnswering`'s plain normal, at the encoder's
    initializer range; the choice survives Keras saving and reaches the model from a config."""
    model = _model(span_head_init=law)
    stddev = model.encoder.initializer_range
    for dense in (model.start_dense, model.end_dense):
        draw = keras.ops.convert_to_numpy(dense.kernel_initializer((40_000, 1))).ravel()
        if law == "normal":
            assert draw.std() == pytest.approx(stddev, rel=0.02)
            assert np.abs(draw).max() > 3 * stddev  # about 100 of 40,000 beyond 3 stddev
        else:
            assert draw.std() == pytest.approx(0.8796 * stddev, rel=0.02)
            assert np.abs(draw).max() <= 2 * stddev
    model.save(tmp_path / "qa.keras")
    assert keras.saving.load_model(tmp_path / "qa.keras").span_head_init == law
    assert FinetuneConfig().override(f"span_head_init={law}").span_head_init == law
    with pytest.raises(ConfigError, match="span_head_init must be \"truncated_normal\" or "
                       "\"normal\", got 'uniform'"):  # fmt: skip
        FinetuneConfig(span_head_init="uniform")
