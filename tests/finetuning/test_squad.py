"""SQuAD: reading, windows, span decoding, and `--task squad1|squad2` through the question
answering kind: memorising toy questions, the threshold chosen on dev, predict and export."""

import contextlib
import io
import json

import numpy as np
import pytest
from helpers import scratch_init, shuffle_warnings
from test_question_answering import WORDS, _toy, _write_squad

from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets import squad
from electra_tf.datasets.squad import best_spans, make_features, predict_answers, read_squad

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


def _squad_folder(tmp_path, version, train_rows, dev_rows):
    """A SQuAD folder (`train-v2.0.json` and `dev-v2.0.json`, or the v1.1 files) of toy
    questions, its vocabulary and a one-layer, hidden-16 scratch initialization."""
    import dataclasses

    data = tmp_path / "squad"
    data.mkdir()
    _write_squad(data / f"train-{version}.json", train_rows)
    _write_squad(data / f"dev-{version}.json", dev_rows)
    vocab = write_vocabulary([*SPECIAL_TOKENS, *WORDS, "."], tmp_path / "vocab.txt")
    init = scratch_init(len(SPECIAL_TOKENS) + len(WORDS) + 1, vocab)
    return data, dataclasses.replace(init, encoder_config={**init.encoder_config, "num_layers": 1})


TOY_OVERRIDES = ("learning_rate=1e-2", "batch_size=16", "max_seq_length=32",
                 "max_query_length=16", "layerwise_decay=1.0")  # fmt: skip


def test_squad1_task_trains_the_question_answerer_and_memorises_the_toy_questions(
    tmp_path, monkeypatch, recwarn
):
    """`--task squad1` is the product kind under SQuAD 1.1: no answerability head, no
    threshold, the results' keys (exact, f1, ...) and the predictions file; a training
    question whose answer is not in its context is skipped and named."""
    from electra_tf.finetuning import run as run_module
    from electra_tf.tasks.model_folder import load_finetuned
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer

    rows = [r for r in _toy(48, 0) if r["answers"]]
    data, init = _squad_folder(tmp_path, "v1.1", rows, rows)
    train = json.loads((data / "train-v1.1.json").read_text())
    train["data"][0]["paragraphs"].append(SQUAD["data"][0]["paragraphs"][0])  # q1..q4
    (data / "train-v1.1.json").write_text(json.dumps(train))
    monkeypatch.setattr(run_module, "load_initialization", lambda spec, vocab=None: init)
    report = run_module.finetune_task(
        "squad1", "scratch", data_dir=data, output_dir=tmp_path / "run", progress=None,
        overrides=(*TOY_OVERRIDES, "epochs=8"),
    )  # fmt: skip
    assert report["skipped_ids"] == ["q4"]  # "Seattle" is not in its context
    assert report["skipped"] == {"answers_not_in_context": 1, "impossible_in_v1": 1}
    dev = report["runs"][0]["dev"]
    assert dev["exact"] == 100.0 and dev["f1"] == 100.0 and "threshold" not in dev
    assert {"dev/exact", "dev/f1"} <= set(report["summary"])
    model, info = load_finetuned(tmp_path / "run")
    assert isinstance(model, ElectraQuestionAnswerer) and model.version_2 is False
    assert (info["kind"], info["pair"]) == ("question_answering", True)
    lines = (tmp_path / "run" / "predictions" / "dev.jsonl").read_text().splitlines()
    predicted = [json.loads(line) for line in lines]
    assert [p["answer"] for p in predicted] == [r["answers"] for r in rows]
    assert all(r["context"][p["start"] : p["end"]] == p["answer"]
               for r, p in zip(rows, predicted, strict=True))  # fmt: skip
    assert not shuffle_warnings(recwarn)


ASKED = [("where does ada live", "the food was good . ada lives in rome ."),
         ("where does bob live", "bob lives in paris . the food was good ."),
         ("who was the food", "the food was good .")]  # fmt: skip


@pytest.fixture(scope="module")
def squad2_run(tmp_path_factory):
    """A `--task squad2` run from the command line on a toy SQuAD 2.0 folder: (its SQuAD
    folder, the run folder); trained once for the tests below."""
    from electra_tf.cli import main
    from electra_tf.finetuning import run as run_module

    tmp_path = tmp_path_factory.mktemp("squad2")
    data, init = _squad_folder(tmp_path, "v2.0", _toy(64, 0), _toy(16, 1))
    run = tmp_path / "run"
    settings = [a for o in (*TOY_OVERRIDES, "epochs=8") for a in ("--set", o)]
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()):
        patch.setattr(run_module, "load_initialization", lambda spec, vocab=None: init)
        assert main(["finetune", "--task", "squad2", "--init", "scratch", "--data-dir",
                     str(data), "--output-dir", str(run), *settings]) == 0  # fmt: skip
    return data, run


def _predicted(run) -> list[dict]:
    """`electra-tf predict --model RUN` of the `ASKED` questions, as its JSON lines."""
    from electra_tf.cli import main

    printed = io.StringIO()
    arguments = [a for q, c in ASKED for a in ("--question", q, "--context", c)]
    with contextlib.redirect_stdout(printed):
        assert main(["predict", "--model", str(run), *arguments]) == 0
    return [json.loads(line) for line in printed.getvalue().splitlines()]


def test_squad2_task_chooses_the_threshold_on_dev_keeps_it_and_predicts(squad2_run):
    """`--task squad2`: the no-answer threshold is chosen on dev (the official search over
    the kept model's dev answers gives it back) and kept with the model, which memorised
    the toy questions and answers them with `predict` from the run folder."""
    from electra_tf.tasks.model_folder import load_finetuned

    data, run = squad2_run
    results = json.loads((run / "results.json").read_text())
    dev = results["runs"][0]["dev"]
    assert dev["f1"] >= 90.0 and {"exact", "f1", "HasAns_f1", "NoAns_f1"} <= set(dev)
    assert {"dev/exact", "dev/f1", "dev/threshold"} <= set(results["summary"])
    model, info = load_finetuned(run)
    assert (info["kind"], model.version_2) == ("question_answering", True)
    assert float(model.threshold.numpy()) == dev["threshold"]
    examples = squad.read_squad(data / "dev-v2.0.json", version_2=True)
    details = model.answer_details(examples)
    threshold, f1 = squad.best_threshold(details, {e.qid: e.answers for e in examples})
    assert dev["threshold"] == pytest.approx(threshold, abs=1e-3) and dev["threshold"] != 0.0
    assert dev["f1"] == pytest.approx(f1)
    predicted = _predicted(run)
    assert [p["answer"] for p in predicted] == ["rome", "paris", ""]
    assert [c[p["start"] : p["end"]] for (_, c), p in zip(ASKED, predicted, strict=True)] == [
        "rome", "paris", ""]  # fmt: skip


def test_squad2_task_exports_a_savedmodel_that_answers_as_predict(squad2_run, tmp_path):
    """`electra-tf export` of a `--task squad2` run: `serving_default` answers the questions
    as `predict` on the run folder does (answer, offsets, no-answer probability)."""
    import tensorflow as tf

    from electra_tf.cli import main

    _, run = squad2_run
    predicted = _predicted(run)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["export", "--checkpoint", str(run), "--out", str(tmp_path / "serving")]) == 0
    version = next((tmp_path / "serving").glob("*/*/saved_model.pb")).parent
    served = tf.saved_model.load(str(version)).signatures["serving_default"]
    got = served(question=tf.constant([q for q, _ in ASKED]),
                 context=tf.constant([c for _, c in ASKED]))  # fmt: skip
    assert [a.decode() for a in got["answer"].numpy()] == [p["answer"] for p in predicted]
    assert got["start"].numpy().tolist() == [p["start"] for p in predicted]
    assert got["end"].numpy().tolist() == [p["end"] for p in predicted]
    np.testing.assert_allclose(got["no_answer"].numpy(), [p["no_answer"] for p in predicted],
                               atol=1e-5)  # fmt: skip
    np.testing.assert_allclose(got["score"].numpy(), [p["score"] for p in predicted], atol=1e-5)


def test_a_squad_run_folder_of_the_former_span_kind_is_refused_not_resumed(tmp_path, monkeypatch):
    """A `--task squad2` run folder started by the former span kind (its request.json has
    no kind) holds another model's checkpoints: one sentence, not a resume into them."""
    from electra_tf.config import ConfigError
    from electra_tf.finetuning import run as run_module
    from electra_tf.finetuning.request import _digest_request

    class Trained(Exception):
        pass

    def train_seed(*args, **kwargs):
        raise Trained

    data, init = _squad_folder(tmp_path, "v2.0", _toy(8, 0), _toy(4, 1))
    monkeypatch.setattr(run_module, "load_initialization", lambda spec, vocab=None: init)
    monkeypatch.setattr(run_module, "train_seed", train_seed)
    run = tmp_path / "run"
    arguments = dict(data_dir=data, output_dir=run, progress=None, overrides=TOY_OVERRIDES)
    with pytest.raises(Trained):  # the request is recorded, then training starts
        run_module.finetune_task("squad2", "scratch", **arguments)
    recorded = json.loads((run / "request.json").read_text())
    recorded = {k: v for k, v in recorded.items() if k not in ("kind", "digest")}
    recorded["digest"] = _digest_request(recorded)  # as the span kind's runs recorded it
    (run / "request.json").write_text(json.dumps(recorded))
    (run / "seeds" / "seed-1").mkdir(parents=True)
    (run / "seeds" / "seed-1" / "best.weights.h5").write_bytes(b"span weights")
    with pytest.raises(ConfigError, match=r"another request \(its kind differ"):
        run_module.finetune_task("squad2", "scratch", **arguments)


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


def test_windows_are_the_same_whatever_block_the_tokenizer_is_called_on(tmp_path, monkeypatch):
    """Distinct strings are tokenized once per block of examples: blocks of 1 (each example's
    question, words and answer on their own, as a tokenizer call per example did) and of
    3 give the same windows, spans and maps."""
    from electra_tf.datasets import squad

    path = tmp_path / "dev-v2.0.json"
    path.write_text(json.dumps(SQUAD))
    examples = read_squad(path, version_2=True) * 3
    tokenizer = _squad_tokenizer(tmp_path)
    made = []
    for block in (1, 3, 512):
        monkeypatch.setattr(squad, "TOKENIZE_BLOCK", block)
        made.append(make_features(examples, tokenizer, 16, 4, 4))
    for other in made[1:]:
        for name in ("token_ids", "padding_mask", "segment_ids"):
            np.testing.assert_array_equal(other.inputs[name], made[0].inputs[name])
        for name in ("start_positions", "end_positions", "answerable", "example_index"):
            np.testing.assert_array_equal(getattr(other, name), getattr(made[0], name))
        assert (other.token_to_word, other.max_context) == (made[0].token_to_word,
                                                            made[0].max_context)  # fmt: skip
    assert made[0].answerable.sum() > 0


def test_best_spans_respect_length_order_and_context():
    start = np.array([0.0, 3.0, 1.0, 0.5])
    end = np.array([0.0, 0.2, 2.0, 4.0])
    mapping = {1: 0, 2: 1, 3: 2}
    context = {1: True, 2: True, 3: True}
    spans = best_spans(start, end, mapping, context, n_best=4, max_answer_length=2)
    # (1, 3) would score 7 but is 3 tokens long; (1, 2) scores 5; (3, 3) 4.5; (2, 3) 5.
    assert spans[0][1:] in [(1, 2), (2, 3)] and spans[0][0] == 5.0
    assert all(e - s + 1 <= 2 and e >= s and s in mapping for _, s, e in spans)
