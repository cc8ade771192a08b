"""Extractive question answering as a kind: answers and offsets, the threshold, files, the
Keras `ElectraQuestionAnswerer`, and the run from files to `predict`."""

import contextlib
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
from helpers import CHILD_PYTHON, scratch_init, scratch_init_one_layer

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets import squad
from electra_tf.datasets.files import Columns
from electra_tf.metrics import squad_f1
from electra_tf.tasks.kinds.question_answering import read_questions

WORDS = "where does ada bob live lives in rome paris who the food was good what".split()


def _features(example, words_at):
    """One window whose positions 1.. hold the context's words (position -> word index)."""
    return squad.SquadFeatures(
        {}, None, None, None, np.array([0]), [words_at], [{p: True for p in words_at}]
    )


def test_answer_offsets_score_and_no_answer_worked_example():
    context = "Ada lives in (Rome). Bob too"
    example, problem = squad.squad_example("q", "where?", context, ["Rome"], None)
    assert problem is None and example.words[3] == "(Rome)."
    assert (example.start_word, example.end_word) == (3, 3)
    words_at = {1: 0, 2: 1, 3: 2, 4: 3, 5: 4}
    start = np.array([0.0, 0.0, 0.0, 1.0, 3.0, 0.0])
    end = np.array([0.0, 0.0, 0.0, 0.0, 2.0, 1.0])
    outputs = {"start_logits": start[None], "end_logits": end[None],
               "answerable_logits": np.array([0.5])}  # fmt: skip
    details = squad.answer_details([example], _features(example, words_at), outputs, True)
    got = details["q"]
    assert got["answer"] == "Rome" and context[got["start"] : got["end"]] == "Rome"
    assert (got["start"], got["end"]) == (14, 18)  # "(Rome)." stripped to Rome
    p_start = math.exp(3.0) / np.exp(start).sum()
    p_end = math.exp(2.0) / np.exp(end).sum()
    assert got["score"] == pytest.approx(p_start * p_end, rel=1e-9)
    assert got["no_answer"] == pytest.approx(1 / (1 + math.exp(0.5)))
    # Above the threshold nothing is answered: "" at offsets 0, 0, score 0.
    unanswered = squad.with_threshold(details, 0.6)["q"]
    assert (unanswered["answer"], unanswered["start"], unanswered["end"]) == ("", 0, 0)
    assert unanswered["score"] == 0.0 and unanswered["span"][0] == "Rome"


def test_best_threshold_equals_a_brute_force_search():
    rng = np.random.default_rng(0)
    details, references = {}, {}
    for i in range(40):
        gold = [] if i % 3 == 0 else [str(rng.choice(["rome", "paris", "ada bob"]))]
        span = str(rng.choice(["rome", "paris", "ada", "bob"]))
        details[str(i)] = {"span": (span, 0, len(span)), "span_score": 0.5,
                           "answerable_logit": float(rng.normal()), "no_answer": 0.5}  # fmt: skip
        references[str(i)] = gold

    def f1_at(t):
        return 100 * np.mean([
            squad_f1(v["span"][0] if v["answerable_logit"] >= t else "", references[q])
            for q, v in details.items()
        ])  # fmt: skip

    threshold, f1 = squad.best_threshold(details, references)
    logits = sorted(v["answerable_logit"] for v in details.values())
    best = max(f1_at(t) for t in [*logits, logits[-1] + 1])
    assert f1 == pytest.approx(best) and f1_at(threshold) == pytest.approx(best)
    # Halfway between dev logits, so a logit that moves by float noise keeps its side.
    assert min(abs(threshold - x) for x in logits) > 1e-3


def test_answers_not_at_their_offset_are_reported():
    context = "ada lives in rome"
    _, problem = squad.squad_example("a", "q", context, ["rome"], 13)
    assert problem is None
    _, problem = squad.squad_example("b", "q", context, ["rome"], 3)
    assert problem == "answers_not_in_context"
    _, problem = squad.squad_example("c", "q", context, ["paris"], None)
    assert problem == "answers_not_in_context"
    example, problem = squad.squad_example("d", "q", context, [], None)
    assert problem is None and example.answers == [] and example.start_word == -1


def test_read_questions_from_tables_and_squad_json(tmp_path):
    rows = [
        {"question": "where", "context": "ada lives in rome", "answers": "rome"},
        {"question": "who", "context": "ada lives in rome", "answers": ["ada", "Ada"]},
        {"question": "what", "context": "the food was good", "answers": ""},
        {"question": "where", "context": "bob in paris",
         "answers": {"text": ["paris"], "answer_start": [7]}},
        {"question": "where", "context": "bob in paris", "answers": "rome"},
    ]  # fmt: skip
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    examples, report = read_questions(path, Columns())
    assert [e.answers for e in examples] == [["rome"], ["ada", "Ada"], [], ["paris"], ["rome"]]
    assert [e.start_word for e in examples] == [3, 0, -1, 2, -1]
    assert report.skipped_rows == {"answers_not_in_context": [5]}
    csv = tmp_path / "dev.csv"
    csv.write_text("q,c,a,at\nwhere,ada lives in rome,rome,13\nwho,ada in rome,ada,5\n")
    columns = Columns(question="q", context="c", answer="a", answer_start="at")
    examples, report = read_questions(csv, columns)
    assert [e.start_word for e in examples] == [3, -1] and report.skipped["answers_not_in_context"]
    squad_file = tmp_path / "train.json"
    squad_file.write_text(
        json.dumps(
            {
                "version": "v2.0",
                "data": [
                    {
                        "paragraphs": [
                            {
                                "context": "ada lives in rome",
                                "qas": [
                                    {
                                        "id": "1",
                                        "question": "where",
                                        "answers": [{"text": "rome", "answer_start": 13}],
                                    },
                                    {
                                        "id": "2",
                                        "question": "what",
                                        "answers": [],
                                        "is_impossible": True,
                                    },
                                ],
                            }
                        ]
                    }
                ],
            }
        )
    )
    examples, report = read_questions(squad_file, Columns())
    assert [(e.qid, e.answers, e.start_word) for e in examples] == [
        ("1", ["rome"], 3), ("2", [], -1)]  # fmt: skip
    with pytest.raises(ConfigError, match="no column 'context'"):
        read_questions(tmp_path / "dev.csv", Columns(question="q", context="context"))


def _toy(n, seed):
    """Where someone lives (the city after "in", anywhere in the context), and every fourth
    question one that the context does not answer."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        name, city = rng.choice(["ada", "bob"]), rng.choice(["rome", "paris"])
        parts = ["the food was good .", f"{name} lives in {city} ."]
        context = " ".join(parts if rng.random() < 0.5 else parts[::-1])
        if i % 4 == 3:
            rows.append({"question": "who was the food", "context": "the food was good .",
                         "answers": ""})  # fmt: skip
        else:
            rows.append({"question": f"where does {name} live", "context": context,
                         "answers": str(city)})  # fmt: skip
    return rows


def test_question_answerer_learns_round_trips_and_keeps_the_threshold(tmp_path):
    """A one-layer encoder; the full form, two layers, is
    test_question_answerer_learns_round_trips_and_keeps_the_threshold_with_two_layers."""
    _question_answerer_learns(tmp_path, layers=1)


@pytest.mark.slow
def test_question_answerer_learns_round_trips_and_keeps_the_threshold_with_two_layers(tmp_path):
    _question_answerer_learns(tmp_path, layers=2)


def _question_answerer_learns(tmp_path, layers):
    """`ElectraQuestionAnswerer` (a `layers`-layer encoder) refuses SQuAD 2.0 data when
    compiled for 1.1, learns the toy, chooses its threshold on held-out questions, answers
    every test question, and keeps all of it through `.keras` saving."""
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    keras.utils.set_random_seed(0)
    tokens = [*SPECIAL_TOKENS, *WORDS, "."]
    encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=layers, hidden_dim=16,
        embedding_dim=16, num_heads=2, intermediate_dim=32, max_sequence_length=32,
        dropout=0.0)  # fmt: skip
    model = ElectraQuestionAnswerer(
        encoder, ElectraQuestionAnswererPreprocessor(tokens, sequence_length=32)
    )
    model.build()
    # Start and end heads start apart (one shared initializer made them equal).
    assert not np.allclose(model.start_dense.kernel.numpy(), model.end_dense.kernel.numpy())
    rows = _toy(96, 0)
    questions, contexts = [r["question"] for r in rows], [r["context"] for r in rows]
    answers = [r["answers"] for r in rows]
    model.compile(optimizer=keras.optimizers.Adam(3e-3))  # the loss and weights: "auto"
    assert model.version_2 is False
    with pytest.raises(ValueError, match="version_2=True"):
        model.fit((questions, contexts), answers, epochs=1)
    model = ElectraQuestionAnswerer(
        encoder, ElectraQuestionAnswererPreprocessor(tokens, sequence_length=32)
    )
    model.fit((questions, contexts), answers, epochs=1, batch_size=16, seed=0, verbose=0)
    assert model.version_2 is True  # an unanswerable question made it SQuAD 2.0
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    model.fit((questions, contexts), answers, epochs=15, batch_size=16, seed=0, verbose=0)
    # The no-answer threshold, chosen on held-out questions as dev chooses it.
    from electra_tf.tasks.question_answerer_preprocessor import as_examples

    held = _toy(16, 2)
    examples, _ = as_examples([r["question"] for r in held], [r["context"] for r in held],
                              [r["answers"] for r in held])  # fmt: skip
    details = model.answer_details(examples)
    threshold, f1 = squad.best_threshold(details, {e.qid: e.answers for e in examples})
    assert f1 == 100.0
    model.threshold.assign(threshold)
    test = _toy(12, 1)
    got = model.predict_answers([r["question"] for r in test], [r["context"] for r in test])
    for row, answer in zip(test, got, strict=True):
        assert row["context"][answer["start"] : answer["end"]] == answer["answer"]
    correct = sum(a["answer"] == r["answers"] for r, a in zip(test, got, strict=True))
    assert correct == len(test), got
    path = tmp_path / "qa.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert float(loaded.threshold.numpy()) == pytest.approx(threshold)
    again = loaded.predict_answers([r["question"] for r in test], [r["context"] for r in test])
    for a, b in zip(got, again, strict=True):
        assert a["answer"] == b["answer"] and (a["start"], a["end"]) == (b["start"], b["end"])
        np.testing.assert_allclose(a["no_answer"], b["no_answer"], atol=1e-6)


def test_question_answerer_fits_a_dataset_of_strings_as_it_fits_lists(steps_run):
    """Lists, a dataset and a batched dataset of strings train alike; `[eager]` (the default
    twin) runs the three fits' steps eagerly, `[traced]` (the full form, `-m slow`) traces
    each model's step."""
    import tensorflow as tf

    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    tokens = [*SPECIAL_TOKENS, *WORDS, "."]
    rows = _toy(48, 3)
    questions, contexts = [r["question"] for r in rows], [r["context"] for r in rows]
    answers = [r["answers"] for r in rows]
    given = {
        "lists": lambda: ((questions, contexts), answers),
        "dataset": lambda: (tf.data.Dataset.from_tensor_slices(((questions, contexts), answers)),),
        "batched": lambda: (
            tf.data.Dataset.from_tensor_slices(((questions, contexts), answers)).batch(5),
        ),
    }
    weights = {}
    for name, arguments in given.items():
        keras.utils.set_random_seed(0)
        encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=1, hidden_dim=16,
            embedding_dim=16, num_heads=2, intermediate_dim=32, max_sequence_length=32,
            dropout=0.0)  # fmt: skip
        model = ElectraQuestionAnswerer(
            encoder, ElectraQuestionAnswererPreprocessor(tokens, sequence_length=32)
        )
        model.build()
        before = [w.numpy() for w in model.weights]
        model.fit(*arguments(), epochs=1, batch_size=16, seed=0, verbose=0)
        assert model.version_2 is True  # the dataset's empty answers made it SQuAD 2.0
        weights[name] = [w.numpy() for w in model.weights]
        assert not all(np.allclose(a, b) for a, b in zip(before, weights[name], strict=True))
    for name in ("dataset", "batched"):
        for a, b in zip(weights["lists"], weights[name], strict=True):
            np.testing.assert_allclose(a, b, atol=1e-6)


def _write_squad(path, rows):
    paragraphs = [
        {"context": r["context"], "qas": [{
            "id": f"{path.stem}-{i}", "question": r["question"],
            "is_impossible": not r["answers"],
            "answers": [{"text": r["answers"], "answer_start": r["context"].index(r["answers"])}]
            if r["answers"] else [],
        }]}
        for i, r in enumerate(rows)
    ]  # fmt: skip
    path.write_text(json.dumps({"version": "v2.0", "data": [{"paragraphs": paragraphs}]}))
    return path


def test_finetune_files_trains_scores_and_predicts_question_answering(tmp_path):
    """The run, `predict`, `export` and `--init`, the export's raw serving_default read in
    this process, the full-disk `predict`s given the predictor already open; the full form
    (the raw serving_default in a fresh process that never imports electra_tf, each
    full-disk `predict` opening the run folder) is
    test_finetune_files_trains_scores_and_predicts_question_answering_in_a_fresh_process."""
    _finetune_files_question_answering(tmp_path, scratch_init, fresh_process=False)


@pytest.mark.slow
def test_finetune_files_trains_scores_and_predicts_question_answering_in_a_fresh_process(
    tmp_path,
):
    _finetune_files_question_answering(tmp_path, scratch_init, fresh_process=True)


#: The raw serving_default of a QA export: argv[1] the version folder, stdin [questions,
#: contexts]; prints [answers, starts, ends].
RAW_QA_SCRIPT = (
    "import json, sys\nimport tensorflow as tf\nimport tensorflow_text\n"
    "served = tf.saved_model.load(sys.argv[1]).signatures['serving_default']\n"
    "q, c = json.load(sys.stdin)\n"
    "out = served(question=tf.constant(q), context=tf.constant(c))\n"
    "assert 'electra_tf' not in sys.modules\n"
    "print(json.dumps([[a.decode() for a in out['answer'].numpy()],\n"
    "                  out['start'].numpy().tolist(), out['end'].numpy().tolist()]))\n"
)


def _raw_qa_serving(version, asked, cwd, fresh_process):
    """(answers, starts, ends) of the export's serving_default for `asked` (question, context)
    pairs: RAW_QA_SCRIPT in a fresh process without electra_tf, or the same calls here."""
    if not fresh_process:
        import tensorflow as tf

        served = tf.saved_model.load(str(version)).signatures["serving_default"]
        out = served(question=tf.constant([q for q, _ in asked]),
                     context=tf.constant([c for _, c in asked]))  # fmt: skip
        answers = [a.decode() for a in out["answer"].numpy()]
        return answers, out["start"].numpy().tolist(), out["end"].numpy().tolist()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", RAW_QA_SCRIPT, str(version)], capture_output=True, text=True,
        env=env, input=json.dumps([[q for q, _ in asked], [c for _, c in asked]]),
        cwd=str(cwd), timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _finetune_files_question_answering(tmp_path, make_init, fresh_process):
    """Fine-tunes the toy SQuAD files from `make_init`'s scratch encoder; the dev predictions,
    `predict` (Keras, CLI, a file, a full disk), `export` answering as the run (through
    `predict` and raw: `fresh_process` or here) and `--init` from the run and its export."""
    from electra_tf.cli import main
    from electra_tf.finetuning import user_task
    from electra_tf.finetuning.predict import open_predictor

    vocab = write_vocabulary([*SPECIAL_TOKENS, *WORDS, "."], tmp_path / "vocab.txt")
    init = make_init(len(SPECIAL_TOKENS) + len(WORDS) + 1, vocab)
    train = _write_squad(tmp_path / "train.json", _toy(96, 0))
    dev_rows = _toy(16, 1)
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join(json.dumps(r) + "\n" for r in dev_rows))
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        report = user_task.finetune_files(
            "scratch", train=train, dev=dev, output_dir=tmp_path / "run", progress=None,
            overrides=("epochs=10", "learning_rate=1e-2", "batch_size=16", "max_seq_length=32",
                       "max_query_length=16", "layerwise_decay=1.0", "defaults=paper"),
            # (the from-scratch toy at 1e-2 was calibrated with the paper's warmup)
        )  # fmt: skip
    finally:
        user_task.load_initialization = original
    assert report["kind_decided"].startswith("inferred: the format of train.json")
    run = report["runs"][0]
    assert run["dev"]["f1"] >= 90.0 and "threshold" in run["dev"]
    lines = (tmp_path / "run" / "predictions" / "dev.jsonl").read_text().splitlines()
    predicted = [json.loads(line) for line in lines]
    assert len(predicted) == len(dev_rows)
    for row, got in zip(dev_rows, predicted, strict=True):
        assert row["context"][got["start"] : got["end"]] == got["answer"]
        assert got["gold"] == ([row["answers"]] if row["answers"] else [])
    # The kept model answers from the run folder: the Keras model and the CLI agree.
    predictor = open_predictor(tmp_path / "run")
    direct = predictor([r["question"] for r in dev_rows[:3]], [r["context"] for r in dev_rows[:3]])
    printed = io.StringIO()
    arguments = [a for r in dev_rows[:3] for a in ("--question", r["question"],
                                                   "--context", r["context"])]  # fmt: skip
    with contextlib.redirect_stdout(printed):
        assert main(["predict", "--model", str(tmp_path / "run"), *arguments]) == 0
    cli = [json.loads(line) for line in printed.getvalue().splitlines()]
    assert [c["answer"] for c in cli] == [d["answer"] for d in direct]
    assert [c["question"] for c in cli] == [r["question"] for r in dev_rows[:3]]
    assert [p["answer"] for p in predicted[:3]] == [d["answer"] for d in direct]
    out = tmp_path / "answers.jsonl"
    assert main(["predict", "--model", str(tmp_path / "run"), "--input", str(dev),
                 "--output", str(out)]) == 0  # fmt: skip
    from_file = [json.loads(line) for line in out.read_text().splitlines()]
    assert [f["answer"] for f in from_file] == [p["answer"] for p in predicted]
    # A full or read-only disk under --output: one sentence, exit 2, nothing written. Here
    # the command gets the predictor opened above (loading is checked above); the full form
    # (fresh_process) opens the run folder again each time.
    import electra_tf.finetuning.predict as predict_module
    import electra_tf.io.durable as durable

    # The refusal is for full.jsonl only: a module first imported while it is in place (the
    # CLI's error path imports `pretraining.run`) binds it for good, and later tests in this
    # process must still write (a pre-training fixture once failed with ENOSPC here).
    real_write = durable.write_atomic
    for number, reason, said in ((28, "No space left on device", "the disk is full"),
                                 (30, "Read-only file system", "read-only")):  # fmt: skip

        def refuse(path, *args, number=number, reason=reason, **kwargs):
            if Path(path).name != "full.jsonl":
                return real_write(path, *args, **kwargs)
            raise OSError(number, reason, str(path))

        original_write, original_open = durable.write_atomic, predict_module.open_predictor
        durable.write_atomic = refuse
        if not fresh_process:
            predict_module.open_predictor = lambda path, *args, **kwargs: predictor
        stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(stderr):
                status = main(["predict", "--model", str(tmp_path / "run"), "--input", str(dev),
                               "--output", str(tmp_path / "full.jsonl")])  # fmt: skip
        finally:
            durable.write_atomic, predict_module.open_predictor = original_write, original_open
        assert status == 2 and not (tmp_path / "full.jsonl").exists()
        said_lines = [x for x in stderr.getvalue().splitlines() if x.startswith("electra-tf")]
        assert len(said_lines) == 1 and "Traceback" not in stderr.getvalue()
        assert said in said_lines[0] and "full.jsonl" in said_lines[0]
    # The export answers as the run: through `predict`, and raw in a process without us.
    assert main(["export", "--checkpoint", str(tmp_path / "run"),
                 "--out", str(tmp_path / "serving")]) == 0  # fmt: skip
    exported = tmp_path / "answers-export.jsonl"
    assert main(["predict", "--model", str(tmp_path / "serving"), "--input", str(dev),
                 "--output", str(exported)]) == 0  # fmt: skip
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    for a, b in zip(from_file, rows, strict=True):
        assert (a["answer"], a["start"], a["end"]) == (b["answer"], b["start"], b["end"])
        np.testing.assert_allclose([a["score"], a["no_answer"]], [b["score"], b["no_answer"]],
                                   atol=1e-5)  # fmt: skip
    version = next((tmp_path / "serving").glob("*/*/saved_model.pb")).parent
    # Beside the dev rows: the answer at the very end of a context of several windows,
    # after accents, CJK and emoji (offsets count characters, not bytes), and a context
    # shorter than its question.
    extra = [("where does ada live", "😀 東京 café . " + "the food was good . " * 12
              + "ada lives in rome"), ("where does bob live", "in paris")]  # fmt: skip
    asked = [*[(r["question"], r["context"]) for r in dev_rows], *extra]
    answers, starts, ends = _raw_qa_serving(version, asked, tmp_path, fresh_process)
    assert answers[: len(dev_rows)] == [p["answer"] for p in predicted]
    assert answers[len(dev_rows) :] == ["rome", "paris"]
    keras_answers = predictor([q for q, _ in extra], [c for _, c in extra])
    assert [(a["answer"], a["start"], a["end"]) for a in keras_answers] == list(
        zip(answers[len(dev_rows) :], starts[len(dev_rows) :], ends[len(dev_rows) :], strict=True)
    )
    for (_, context), answer, start, end in zip(asked, answers, starts, ends, strict=True):
        assert context[start:end] == answer
    assert ends[len(dev_rows)] == len(extra[0][1])  # the context's very last character
    # --init from the run and from its export gives the fine-tuned encoder.
    from electra_tf.tasks.initialization import load_initialization

    kept = keras.saving.load_model(tmp_path / "run" / "model" / "model.keras")
    for source in (tmp_path / "run", version):
        encoder = load_initialization(str(source)).build_encoder()
        for a, b in zip(encoder.weights, kept.encoder.weights, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-6)


#: (version_2, threshold, joint_end) of the SavedModel checks: SQuAD 1.1, 2.0, the joint head.
SAVEDMODEL_CASES = ((False, 0.0, False), (True, 0.002, False), (False, 0.0, True))


def test_the_savedmodel_answers_as_the_keras_model_over_windows_and_unicode(tmp_path):
    """One export, SQuAD 1.1 with the joint end head (SQuAD 2.0 with the plain head is
    exported and answers as the Keras model in
    test_finetune_files_trains_scores_and_predicts_question_answering and in test_squad.py's
    squad2 export); the full form, an export for each of the three, is
    test_the_savedmodel_answers_as_the_keras_model_over_windows_and_unicode_in_every_case."""
    _savedmodel_answers_as_keras(tmp_path, SAVEDMODEL_CASES[2:])


@pytest.mark.slow
def test_the_savedmodel_answers_as_the_keras_model_over_windows_and_unicode_in_every_case(tmp_path):
    _savedmodel_answers_as_keras(tmp_path, SAVEDMODEL_CASES)


def _savedmodel_answers_as_keras(tmp_path, cases):
    """The in-graph windows, candidate search, offsets and stripping equal the Python path
    on random questions and contexts (several windows each, punctuation, non-ASCII words,
    empty contexts), for SQuAD 1.1 and 2.0 and the joint end head; the graph's ops are TF
    Serving's."""
    import tensorflow as tf
    from serving_ops import ops_missing_from_tf_text_2_12_1

    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.export import export_finetuned
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
        as_examples,
    )

    words = [*WORDS, "café", "(rome).", "paris,", '"bob"', "naïve", "x", "Zürich", "東京は",
             "首都", "😀", "rome😀", "ÉCOLE"]  # fmt: skip
    tokens = [*SPECIAL_TOKENS, *WORDS, "café", "(", ")", ".", ",", '"', "naive", "##s", "zurich",
              "東", "京", "は", "首", "都", "😀", "ecole"]  # fmt: skip
    rng = np.random.default_rng(5)
    questions = [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 8)))) for _ in range(24)]
    contexts = [  # some with double spaces, some empty
        ("  " if i % 5 == 0 else " ").join(
            rng.choice(words, size=int(rng.integers(0 if i % 7 == 0 else 1, 40)))
        )
        for i in range(24)
    ]
    # Contexts shorter than their (7-word) question, and CJK without spaces.
    questions += ["who does ada live where the food"] * 3 + ["where is 東京"]
    contexts += ["rome", "😀", "Zürich.", "東京は首都 東京は首都 rome 東京は首都"]
    for version_2, threshold, joint, *rule in cases:  # rule: the no-answer rule, if not the
        keras.utils.set_random_seed(int(version_2) + int(joint))  # answerability logit
        encoder = ElectraEncoder(vocabulary_size=len(tokens), num_layers=1, hidden_dim=16,
            embedding_dim=16, num_heads=2, intermediate_dim=32, max_sequence_length=32)  # fmt: skip
        preprocessor = ElectraQuestionAnswererPreprocessor(
            tokens, sequence_length=24, doc_stride=6, max_query_length=8
        )
        model = ElectraQuestionAnswerer(
            encoder, preprocessor, version_2=version_2, n_best=5, max_answer_length=4,
            joint_end=joint, beam_size=6,  # the joint head: 6 starts, each its 5 best ends
            no_answer=rule[0] if rule else "answerability",
        )  # fmt: skip
        model.build()
        if threshold is None:  # the median no-answer logit: some answered, some not
            details = model.answer_details(as_examples(questions, contexts)[0])
            threshold = float(np.median([d["answerable_logit"] for d in details.values()]))
        model.threshold.assign(threshold)
        expected = model.predict_answers(questions, contexts)
        windows = preprocessor.windows(as_examples(questions, contexts)[0])
        assert len(windows.example_index) > 2 * len(questions)  # long contexts: windows
        folder = export_finetuned(model, {"pair": True}, tmp_path / f"v{version_2}{joint}",
                                  model_name="qa", warmup=version_2)  # fmt: skip
        served = tf.saved_model.load(str(folder)).signatures["serving_default"]
        got = served(question=tf.constant(questions), context=tf.constant(contexts))
        for i, want in enumerate(expected):
            assert got["answer"][i].numpy().decode() == want["answer"], (i, want)
            assert (int(got["start"][i]), int(got["end"][i])) == (want["start"], want["end"])
            np.testing.assert_allclose(float(got["score"][i]), want["score"], atol=1e-5)
            np.testing.assert_allclose(float(got["no_answer"][i]), want["no_answer"], atol=1e-5)
            assert contexts[i][want["start"] : want["end"]] == want["answer"]
        answered = sum(bool(w["answer"]) for w in expected)
        assert 0 < answered and (answered < len(expected) or not version_2)
        assert any(not w["answer"].isascii() for w in expected)  # covered: non-ASCII answers
    missing, _, _ = ops_missing_from_tf_text_2_12_1([folder])
    assert not missing, missing


def _qa_driver(tmp_path, run, point="none", epoch=0, layers=2):
    driver = os.path.join(os.path.dirname(__file__), "qa_kill_driver.py")
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.dirname(driver)))}
    args = [*CHILD_PYTHON, driver, str(tmp_path), run, point, str(epoch), str(layers)]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)


def _qa_finished(tmp_path, run):
    from electra_tf.tasks.model_folder import load_finetuned

    result = json.loads((tmp_path / run / "results.json").read_text())["runs"][0]
    model, _ = load_finetuned(tmp_path / run)
    scores = {k: result[k] for k in ("best_epoch", "history", "dev")}
    return scores, float(model.threshold.numpy()), [w.numpy() for w in model.weights]


def _qa_files(tmp_path):
    write_vocabulary([*SPECIAL_TOKENS, *WORDS, "."], tmp_path / "vocab.txt")
    _write_squad(tmp_path / "train.json", _toy(48, 0))
    _write_squad(tmp_path / "dev.json", _toy(16, 1))


def _qa_same_as_whole(tmp_path, runs, scores, threshold, weights):
    for run in runs:
        got_scores, got_threshold, got_weights = _qa_finished(tmp_path, run)
        assert (got_scores, got_threshold) == (scores, threshold), run
        for x, y in zip(weights, got_weights, strict=True):
            np.testing.assert_array_equal(x, y, err_msg=run)


def test_kill_9_of_a_question_answering_run_resumes_to_the_uninterrupted_run(tmp_path):
    """A real SIGKILL between the best epoch's checkpoint (which holds the no-answer threshold
    chosen on dev) and its best weights, in ONE fresh process; resumed in this process, the
    run equals the uninterrupted one (made here; a one-layer encoder) in weights, threshold,
    best epoch and every dev score. A mid-epoch kill of a fine-tune is in test_engine.py; the
    same kill after a mid-epoch one (two processes) is
    test_kill_9_of_a_question_answering_run_resumes_to_the_uninterrupted_run_after_two_kills;
    the full form, with a process per run and one more resuming both, and two layers, is
    test_kill_9_of_a_question_answering_run_resumes_in_separate_processes."""
    from qa_kill_driver import finetune_in_this_process

    _qa_files(tmp_path)
    finetune_in_this_process(tmp_path, "whole", layers=1)
    scores, threshold, weights = _qa_finished(tmp_path, "whole")
    assert scores["dev"]["f1"] > 50 and "threshold" in scores["dev"]
    killed = _qa_driver(tmp_path, "killed", "before-best", scores["best_epoch"], layers=1)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert not (tmp_path / "killed" / "results.json").exists()
    finetune_in_this_process(tmp_path, "killed", layers=1)
    _qa_same_as_whole(tmp_path, ("killed",), scores, threshold, weights)


@pytest.mark.slow
def test_kill_9_of_a_question_answering_run_resumes_to_the_uninterrupted_run_after_two_kills(
    tmp_path,
):
    """A real SIGKILL mid-epoch, and between an epoch's checkpoint (which holds the no-answer
    threshold chosen on dev) and its best weights; each resumed run equals the uninterrupted
    one in weights, threshold, best epoch and every dev score. Two fresh processes, one per
    kill: the mid-epoch kill; that run's resume (first thing) then the second kill. The
    uninterrupted run and the last resume run in this process; a one-layer encoder. The full
    form, with a process per run and one more resuming both, and two layers, is
    test_kill_9_of_a_question_answering_run_resumes_in_separate_processes."""
    from qa_kill_driver import finetune_in_this_process

    _qa_files(tmp_path)
    finetune_in_this_process(tmp_path, "whole", layers=1)
    scores, threshold, weights = _qa_finished(tmp_path, "whole")
    assert scores["dev"]["f1"] > 50 and "threshold" in scores["dev"]
    killed = _qa_driver(tmp_path, "killed-mid-epoch", "mid-epoch", 2, layers=1)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert not (tmp_path / "killed-mid-epoch" / "results.json").exists()
    best = scores["best_epoch"]
    chain = "killed-mid-epoch,killed-before-best"
    killed = _qa_driver(tmp_path, chain, "before-best", best, layers=1)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert not (tmp_path / "killed-before-best" / "results.json").exists()
    finetune_in_this_process(tmp_path, "killed-before-best", layers=1)
    runs = ("killed-mid-epoch", "killed-before-best")
    _qa_same_as_whole(tmp_path, runs, scores, threshold, weights)


@pytest.mark.slow
def test_kill_9_of_a_question_answering_run_resumes_in_separate_processes(tmp_path):
    """The same, the uninterrupted run and each kill in a process of its own, and one fresh
    process resuming both killed runs, one after the other."""
    _qa_files(tmp_path)
    done = _qa_driver(tmp_path, "whole")
    assert done.returncode == 0, done.stderr[-2000:]
    scores, threshold, weights = _qa_finished(tmp_path, "whole")
    assert scores["dev"]["f1"] > 50 and "threshold" in scores["dev"]
    points = (("mid-epoch", 2), ("before-best", scores["best_epoch"]))
    for point, epoch in points:
        run = f"killed-{point}"
        killed = _qa_driver(tmp_path, run, point, epoch)
        assert killed.returncode == -9, (point, killed.stderr[-2000:])
        assert not (tmp_path / run / "results.json").exists()
    resumed = _qa_driver(tmp_path, ",".join(f"killed-{point}" for point, _ in points))
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    runs = [f"killed-{point}" for point, _ in points]
    _qa_same_as_whole(tmp_path, runs, scores, threshold, weights)


def test_the_joint_end_head_trains_from_files_and_keeps(tmp_path):
    """The same run and kept model, without the export: a joint-end model's SavedModel
    answering as the Keras model is checked in
    test_the_savedmodel_answers_as_the_keras_model_over_windows_and_unicode, `export` of a
    run folder in test_finetune_files_trains_scores_and_predicts_question_answering; the full
    form (the two-layer toy encoder, and the export) is
    test_the_joint_end_head_trains_from_files_keeps_and_exports; here a one-layer encoder."""
    _joint_end_run(tmp_path, export=False, make_init=scratch_init_one_layer)


@pytest.mark.slow
def test_the_joint_end_head_trains_from_files_keeps_and_exports(tmp_path):
    _joint_end_run(tmp_path, export=True)


def _joint_end_run(tmp_path, export, make_init=scratch_init):
    """`--joint-end`: the end scored given the start, through the engine (trained with the true
    start), the kept model and (`export`) its SavedModel, which answer alike."""
    import tensorflow as tf

    from electra_tf.finetuning import user_task
    from electra_tf.finetuning.predict import open_predictor
    from electra_tf.tasks.model_folder import load_finetuned

    vocab = write_vocabulary([*SPECIAL_TOKENS, *WORDS, "."], tmp_path / "vocab.txt")
    init = make_init(len(SPECIAL_TOKENS) + len(WORDS) + 1, vocab)
    train = _write_squad(tmp_path / "train.json", _toy(96, 0))
    dev = _write_squad(tmp_path / "dev.json", _toy(16, 1))
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        report = user_task.finetune_files(
            "scratch", train=train, dev=dev, output_dir=tmp_path / "run", progress=None,
            overrides=("epochs=10", "learning_rate=1e-2", "batch_size=16", "max_seq_length=32",
                       "max_query_length=16", "layerwise_decay=1.0", "defaults=paper",
                       "joint_end=true", "beam_size=4"),
        )  # fmt: skip
    finally:
        user_task.load_initialization = original
    assert report["runs"][0]["dev"]["f1"] >= 90.0
    model, _ = load_finetuned(tmp_path / "run")
    assert (model.joint_end, model.beam_size) == (True, 4)
    assert tuple(model.end_hidden.kernel.shape) == (32, 16)  # [token; start] -> hidden
    rows = _toy(12, 3)
    questions, contexts = [r["question"] for r in rows], [r["context"] for r in rows]
    kept = open_predictor(tmp_path / "run")(questions, contexts)
    golds = [[r["answers"]] if r["answers"] else [] for r in rows]
    assert all(squad_f1(k["answer"], g) == 1.0 for k, g in zip(kept, golds, strict=True))
    if not export:
        return
    from electra_tf.cli import main

    assert main(["export", "--checkpoint", str(tmp_path / "run"), "--out",
                 str(tmp_path / "serving")]) == 0  # fmt: skip
    folder = next((tmp_path / "serving").glob("*/*/saved_model.pb")).parent
    served = tf.saved_model.load(str(folder)).signatures["serving_default"]
    got = served(question=tf.constant(questions), context=tf.constant(contexts))
    assert [a.decode() for a in got["answer"].numpy()] == [k["answer"] for k in kept]
    np.testing.assert_allclose(got["score"].numpy(), [k["score"] for k in kept], atol=1e-5)


def test_a_squad2_run_scores_dev_once_per_epoch_and_its_predictions_reuse_that_pass(
    tmp_path, monkeypatch
):  # fmt: skip
    """Dev's threshold is chosen after dev's forward pass and kept in the weights; the
    window outputs do not read it, so the kept model's dev predictions reuse the last
    scoring pass instead of running the encoder over dev once more (a QA bench call
    spent about 5% of its time there). One pass per epoch on dev, one on test."""
    from electra_tf.finetuning import user_task
    from electra_tf.tasks import question_answerer

    vocab = write_vocabulary([*SPECIAL_TOKENS, *WORDS, "."], tmp_path / "vocab.txt")
    init = scratch_init(len(SPECIAL_TOKENS) + len(WORDS) + 1, vocab)
    train = _write_squad(tmp_path / "train.json", _toy(32, 0))
    dev = _write_squad(tmp_path / "dev.json", _toy(12, 1))
    test = _write_squad(tmp_path / "test.json", _toy(9, 2))
    passes, forward = [], question_answerer.window_outputs

    def counted(model, inputs, batch_size):
        passes.append(len(inputs["token_ids"]))
        return forward(model, inputs, batch_size)

    monkeypatch.setattr(question_answerer, "window_outputs", counted)
    monkeypatch.setattr(user_task, "load_initialization", lambda spec, vocab_file=None: init)
    report = user_task.finetune_files(
        "scratch", train=train, dev=dev, test=test, output_dir=tmp_path / "run", progress=None,
        overrides=("epochs=2", "batch_size=16", "max_seq_length=32", "max_query_length=16"),
    )  # fmt: skip
    run = report["runs"][0]
    assert "threshold" in run["dev"] and "f1" in run["test"]
    windows = {n: len(json.loads(p.read_text())["data"][0]["paragraphs"]) for n, p in
               (("dev", dev), ("test", test))}  # fmt: skip
    assert windows["dev"] != windows["test"]  # one window a context here: told by count
    assert sorted(passes) == sorted([windows["dev"]] * 2 + [windows["test"]])
    predicted = (tmp_path / "run" / "predictions" / "dev.jsonl").read_text().splitlines()
    assert len(predicted) == windows["dev"]
