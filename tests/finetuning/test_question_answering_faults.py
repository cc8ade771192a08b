"""Question answering off the happy path (issue 56): each case a refusal in one sentence or
the right answer, never a silent wrong one."""

import contextlib
import io
import json

import keras
import pytest
from helpers import scratch_init, scratch_init_one_layer

from electra_tf.config import ConfigError
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets.files import Columns
from electra_tf.tasks.kinds.question_answering import read_questions

WORDS = "where does ada bob live lives in rome paris who the food was good what".split()
TOKENS = [*SPECIAL_TOKENS, *WORDS, "."]


def _csv(path, header, rows):
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows))
    return path


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROWS = [("where does ada live", "ada lives in rome", "rome"),
        ("where does bob live", "bob lives in paris", "paris")]  # fmt: skip


# -- 1. a missing answer column ----------------------------------------------------------------


def test_a_missing_answer_column_is_refused_unless_the_file_is_only_predicted(tmp_path):
    singular = _csv(tmp_path / "train.csv", "question,context,answer", ROWS)
    with pytest.raises(ConfigError) as said:
        read_questions(singular, Columns())
    message = str(said.value)
    assert "train.csv" in message and "'answers'" in message and "--answer-column" in message
    assert "question, context, answer" in message and "\n" not in message
    lines = _jsonl(tmp_path / "dev.jsonl", [dict(zip(("question", "context", "answer"), r,
                                                     strict=True)) for r in ROWS])  # fmt: skip
    with pytest.raises(ConfigError, match=r"dev\.jsonl.*--answer-column"):
        read_questions(lines, Columns())
    # Named with --answer-column, it reads the answers; without labels needed, questions only.
    examples, _ = read_questions(singular, Columns(answer="answer"))
    assert [e.answers for e in examples] == [["rome"], ["paris"]]
    examples, _ = read_questions(singular, Columns(), needs_labels=False)
    assert [e.question for e in examples] == [r[0] for r in ROWS]
    assert [e.labelled for e in examples] == [False, False]


# -- 2. an unlabelled test file ----------------------------------------------------------------


def _files(tmp_path):
    train = _csv(tmp_path / "train.csv", "question,context,answers", ROWS * 4)
    dev = _csv(tmp_path / "dev.csv", "question,context,answers", ROWS)
    test = _csv(tmp_path / "test.csv", "question,context", [r[:2] for r in ROWS])
    return train, dev, test


def test_an_unlabelled_test_file_is_predicted_never_scored_and_never_makes_it_2_0(tmp_path):
    from electra_tf.finetuning.run import make_job
    from electra_tf.finetuning.user_task import user_task

    train, dev, test = _files(tmp_path)
    task, splits, _, _ = user_task(train, dev, test, Columns(), kind="question_answering")
    job = make_job(task, splits)
    assert job.version_2 is False  # train and dev are SQuAD 1.1
    assert job.splits() == ["dev"]  # test has nothing to score
    # A labelled test file is scored, and its unanswerable questions do not decide 2.0 either.
    labelled = _csv(tmp_path / "test2.csv", "question,context,answers",
                    [*ROWS, ("who was the food", "the food was good", "")])  # fmt: skip
    task, splits, _, _ = user_task(train, dev, labelled, Columns(), kind="question_answering")
    job = make_job(task, splits)
    assert job.version_2 is False and job.splits() == ["dev", "test"]


def test_a_run_with_an_unlabelled_test_file_writes_no_test_score(tmp_path):
    from electra_tf.finetuning import user_task

    train, dev, test = _files(tmp_path)
    vocab = write_vocabulary(TOKENS, tmp_path / "vocab.txt")
    init = scratch_init_one_layer(len(TOKENS), vocab)  # one layer: half the tracing
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        report = user_task.finetune_files(
            "scratch", train=train, dev=dev, test=test, output_dir=tmp_path / "run",
            progress=None, kind="question_answering",
            overrides=("epochs=1", "batch_size=8", "max_seq_length=16", "max_query_length=6",
                       "layerwise_decay=1.0"),
        )  # fmt: skip
    finally:
        user_task.load_initialization = original
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert "test" not in results["runs"][0] and "dev" in results["runs"][0]
    assert not [key for key in results["summary"] if key.startswith("test/")]
    assert "threshold" not in results["runs"][0]["dev"]  # SQuAD 1.1: no answerability head
    predicted = (tmp_path / "run" / "predictions" / "test.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in predicted]
    assert len(rows) == 2 and all("gold" not in row for row in rows)
    assert report["eval_examples"] == {"dev": 2, "test": 2}


# -- 3. duplicate ids --------------------------------------------------------------------------


def test_a_repeated_question_id_is_refused_naming_it_and_its_rows(tmp_path):
    table = _csv(tmp_path / "dev.csv", "id,question,context,answers",
                 [("q1", *ROWS[0]), ("q2", *ROWS[1]), ("q1", *ROWS[1])])  # fmt: skip
    with pytest.raises(ConfigError) as said:
        read_questions(table, Columns())
    assert "dev.csv" in str(said.value) and "'q1'" in str(said.value)
    assert "rows 2 and 4" in str(said.value)
    squad_file = tmp_path / "dev.json"
    qas = [
        {"id": "x", "question": "where", "answers": [{"text": "rome", "answer_start": 13}]},
        {"id": "y", "question": "who", "answers": [{"text": "ada", "answer_start": 0}]},
        {"id": "x", "question": "who", "answers": [{"text": "ada", "answer_start": 0}]},
    ]
    squad_file.write_text(json.dumps(
        {"data": [{"paragraphs": [{"context": "ada lives in rome", "qas": qas}]}]}
    ))  # fmt: skip
    with pytest.raises(ConfigError, match=r"dev\.json.*'x'.*questions 1 and 3"):
        read_questions(squad_file, Columns())


# -- 4. SQuAD-shaped answers in JSON Lines, malformed SQuAD JSON, no half-made run -------------


def test_squad_shaped_answers_in_json_lines_are_read_as_squad_reads_them(tmp_path):
    rows = [
        {"question": "where", "context": "rome or rome", "answers": [
            {"text": "rome", "answer_start": 8}, {"text": "Rome", "answer_start": 8}]},
        {"question": "who", "context": "ada lives in rome",
         "answers": {"text": ["ada"], "answer_start": [0]}},
        {"question": "what", "context": "the food was good", "answers": []},
    ]  # fmt: skip
    examples, report = read_questions(_jsonl(tmp_path / "train.jsonl", rows), Columns())
    assert [e.answers for e in examples] == [["rome", "Rome"], ["ada"], []]
    assert [(e.start_word, e.end_word) for e in examples] == [(2, 2), (0, 0), (-1, -1)]
    assert not report.skipped


@pytest.mark.parametrize(
    "data, said",
    [
        ({"data": [1, 2]}, "article 1"),
        ({"data": {"paragraphs": []}}, "'data'"),
        ({"data": [{"paragraphs": [{"context": "ada", "qas": [{"question": "who"}]}]}]},
         "article 1, paragraph 1, question 1"),
        ({"data": [{"paragraphs": [{"context": "ada", "qas": [
            {"id": "q7", "question": "who", "answers": [{"text": "ada"}]}]}]}]}, "'q7'"),
        ({"data": [{"paragraphs": [{"context": None, "qas": [
            {"id": "q7", "question": "who", "answers": []}]}]}]}, "article 1, paragraph 1"),
        ({"data": [{"paragraphs": [{"context": "ada", "qas": [
            {"id": "q8", "question": "who",
             "answers": [{"text": "ada", "answer_start": "zero"}]}]}]}]}, "'q8'"),
    ],
)  # fmt: skip
def test_malformed_squad_json_is_one_sentence_naming_the_file_and_the_question(
    tmp_path, data, said
):
    path = tmp_path / "train.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as error:
        read_questions(path, Columns())
    assert "train.json" in str(error.value) and said in str(error.value), str(error.value)
    assert "\n" not in str(error.value)


def test_malformed_answers_in_a_table_are_one_sentence_naming_the_row(tmp_path):
    rows = [{"question": "who", "context": "ada lives", "answers": [{"answer_start": 0}]}]
    with pytest.raises(ConfigError, match=r"train\.jsonl, row 1: .*'text'"):
        read_questions(_jsonl(tmp_path / "train.jsonl", rows), Columns())
    rows = [{"question": "who", "context": "ada lives",
             "answers": {"text": ["ada"], "answer_start": ["zero"]}}]  # fmt: skip
    with pytest.raises(ConfigError, match=r"train\.jsonl, row 1: .*'zero'"):
        read_questions(_jsonl(tmp_path / "train.jsonl", rows), Columns())


def test_no_usable_training_answer_is_refused_before_the_run_folder_is_made(tmp_path):
    from electra_tf.finetuning import user_task

    train = _csv(tmp_path / "train.csv", "question,context,answers",
                 [("where", "ada lives in rome", "paris")] * 4)  # fmt: skip
    dev = _csv(tmp_path / "dev.csv", "question,context,answers", ROWS)
    vocab = write_vocabulary(TOKENS, tmp_path / "vocab.txt")
    init = scratch_init(len(TOKENS), vocab)
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        with pytest.raises(ConfigError, match=r"answers_not_in_context.*rows 2, 3, 4, 5"):
            user_task.finetune_files(
                "scratch", train=train, dev=dev, output_dir=tmp_path / "run", progress=None,
                kind="question_answering",
                overrides=("epochs=1", "max_seq_length=16", "max_query_length=6"),
            )  # fmt: skip
    finally:
        user_task.load_initialization = original
    assert not (tmp_path / "run").exists()


def test_a_folder_with_only_a_request_in_it_is_no_run_and_takes_the_new_request(tmp_path):
    from electra_tf.finetuning.request import check_request

    folder = tmp_path / "run"
    check_request(folder, {"data": {"train": {"sha256": "old"}}})
    (folder / "seeds" / "seed-1").mkdir(parents=True)  # a failure before the first epoch
    check_request(folder, {"data": {"train": {"sha256": "new"}}})
    assert json.loads((folder / "request.json").read_text())["data"]["train"]["sha256"] == "new"
    (folder / "seeds" / "seed-1" / "checkpoint.json").write_text("{}")  # work: refused
    with pytest.raises(ConfigError, match="another request"):
        check_request(folder, {"data": {"train": {"sha256": "newer"}}})


# -- 4b. max_query_length and long questions ---------------------------------------------------


def test_a_max_query_length_that_leaves_no_context_is_refused_before_training(tmp_path):
    from electra_tf.finetuning import user_task

    train, dev, _ = _files(tmp_path)
    vocab = write_vocabulary(TOKENS, tmp_path / "vocab.txt")
    init = scratch_init(len(TOKENS), vocab)
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        with pytest.raises(ConfigError) as said:
            user_task.finetune_files(
                "scratch", train=train, dev=dev, output_dir=tmp_path / "run", progress=None,
                kind="question_answering",
                overrides=("epochs=1", "max_seq_length=16"),  # max_query_length: 64
            )  # fmt: skip
    finally:
        user_task.load_initialization = original
    message = str(said.value)
    assert "max_query_length 64" in message and "max_seq_length 16" in message
    assert "12" in message and "\n" not in message  # at most 16 - 4
    assert not (tmp_path / "run").exists()


def _tiny_reader(max_query_length, seq=16, version_2=False):
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    keras.utils.set_random_seed(0)
    encoder = ElectraEncoder(vocabulary_size=len(TOKENS), num_layers=1, hidden_dim=8,
        embedding_dim=8, num_heads=2, intermediate_dim=16, max_sequence_length=32)  # fmt: skip
    preprocessor = ElectraQuestionAnswererPreprocessor(
        TOKENS, sequence_length=seq, doc_stride=4, max_query_length=max_query_length
    )
    model = ElectraQuestionAnswerer(encoder, preprocessor, version_2=version_2)
    model.build()
    return model


def test_a_question_longer_than_the_window_is_cut_in_keras_and_in_the_savedmodel(tmp_path):
    import numpy as np
    import tensorflow as tf

    from electra_tf.tasks.export import TaskServingModule

    model = _tiny_reader(max_query_length=16)  # as a run trained before the refusal
    long_question = " ".join(["where does ada live"] * 4)  # 16 WordPieces: no room left
    questions = ["where does ada live", long_question, "who lives in paris"]
    contexts = ["ada lives in rome . bob lives in paris"] * 3
    expected = model.predict_answers(questions, contexts)
    # The question is cut to what leaves the context room: 16 - 4 = 12 pieces.
    cut = model.predict_answers([" ".join(["where does ada live"] * 3)], contexts[:1])
    assert expected[1] == cut[0]
    assert all(c[r["start"] : r["end"]] == r["answer"] for c, r in zip(contexts, expected,
                                                                        strict=True))  # fmt: skip
    # The SavedModel's `serving_default`, traced as `export_finetuned` saves it (saving and
    # loading it again cost half a minute; test_question_answering.py holds the two equal).
    vocab = write_vocabulary(TOKENS, tmp_path / "vocab.txt")
    module = TaskServingModule(model, vocab, pair=True, seq_length=16)
    got = module.serve_text(tf.constant(questions), tf.constant(contexts))
    for i, want in enumerate(expected):
        assert got["answer"][i].numpy().decode() == want["answer"]
        assert (int(got["start"][i]), int(got["end"][i])) == (want["start"], want["end"])
        np.testing.assert_allclose(float(got["score"][i]), want["score"], atol=1e-5)


# -- 4c. the kind of a question table, and ids in predictions ----------------------------------


def test_a_question_table_without_kind_is_question_answering(tmp_path):
    from electra_tf.finetuning.user_task import user_task

    train, dev, _ = _files(tmp_path)
    task, _, _, how = user_task(train, dev)
    assert task.kind == "question_answering" and "train.csv" in how
    named = _csv(tmp_path / "named.csv", "q,c,a", ROWS)
    columns = Columns(question="q", context="c", answer="a")
    task, splits, _, _ = user_task(named, named, columns=columns)
    assert task.kind == "question_answering" and splits["train"][1].answers == ["paris"]
    lines = _jsonl(tmp_path / "train.jsonl", [{"question": q, "context": c, "answers": a}
                                              for q, c, a in ROWS])  # fmt: skip
    assert user_task(lines, lines)[0].kind == "question_answering"


def test_predict_keeps_the_row_number_and_adds_the_id(tmp_path):
    from electra_tf.cli import main
    from electra_tf.tasks.model_folder import write_model_folder

    model = _tiny_reader(max_query_length=6)
    info = {
        "kind": "question_answering",
        "labels": [],
        "pair": True,
        "max_seq_length": 16,
        "lower_case": True,
        "columns": {"question": "question", "context": "context"},
    }
    write_model_folder(model, tmp_path / "run" / "model", info)
    table = _csv(tmp_path / "ask.csv", "id,question,context",
                 [("q9", *ROWS[0][:2]), ("q2", "", "ada"), ("q1", *ROWS[1][:2])])  # fmt: skip
    out = tmp_path / "out.jsonl"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["predict", "--model", str(tmp_path / "run"), "--input", str(table),
                     "--output", str(out)]) == 0  # fmt: skip
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["row"] for r in rows] == [2, 3, 4]
    assert [r.get("id") for r in rows] == ["q9", "q2", "q1"]
    assert "error" in rows[1] and "answer" in rows[2]


# -- 5. book-length contexts: bounded encoder calls, linear windows ----------------------------


def _book(characters: int, seed: int = 0) -> str:
    import numpy as np

    rng = np.random.default_rng(seed)
    words = []
    while sum(len(w) + 1 for w in words) < characters:
        words.append(str(rng.choice(WORDS)))
    return " ".join(words)


def _rule(spans, piece, span_start):
    """BERT's `_check_is_max_context` as written: every window asked about the piece."""
    best_score, best_start = None, None
    for start, length in spans:
        end = start + length - 1
        if piece < start or piece > end:
            continue
        score = min(piece - start, end - piece) + 0.01 * length
        if best_score is None or score > best_score:
            best_score, best_start = score, start
    return best_start == span_start


def test_the_windows_of_a_50000_character_context_take_linear_time(tmp_path):
    """BERT's most-context rule was asked of every window for every piece (9.5 s for the
    1,318 windows here, quadratic); each window now visits its own pieces (0.4 s), with the
    same flags as the rule."""
    import time

    from electra_tf.data.tokenizer import ElectraTokenizer
    from electra_tf.datasets import squad

    tokenizer = ElectraTokenizer(str(write_vocabulary(TOKENS, tmp_path / "vocab.txt")))
    example, _ = squad.squad_example("q", "where does ada live", _book(50_000))
    began = time.perf_counter()
    windows = squad.make_features([example], tokenizer, 32, doc_stride=8, max_query_length=8)
    seconds = time.perf_counter() - began
    assert len(windows.example_index) > 1000 and seconds < 3.0, seconds
    # The flags are the rule's, on a shorter context (the rule itself is quadratic).
    example, _ = squad.squad_example("q", "where", _book(600, seed=1))
    windows = squad.make_features([example], tokenizer, 16, doc_stride=3, max_query_length=4)
    room = 16 - 1 - 3  # [CLS] where [SEP] ... [SEP]; one WordPiece per word
    total = len(example.words)
    spans, offset = [], 0
    while True:
        length = min(total - offset, room)
        spans.append((offset, length))
        if offset + length >= total:
            break
        offset += min(length, 3)
    for w, (span_start, span_length) in enumerate(spans):
        flags = [windows.max_context[w][3 + i] for i in range(span_length)]
        assert flags == [_rule(spans, span_start + i, span_start) for i in range(span_length)]


def test_the_savedmodel_reads_many_windows_in_bounded_chunks(tmp_path, monkeypatch):
    """A long context is many windows: the graph's encoder reads at most `WINDOW_BATCH` of
    them per call (one call held them all), and the answers stay the Keras model's."""
    import numpy as np
    import tensorflow as tf

    from electra_tf.tasks.export import TaskServingModule
    from electra_tf.tasks.kinds import _answer_graph

    monkeypatch.setattr(_answer_graph, "WINDOW_BATCH", 8, raising=False)
    model = _tiny_reader(max_query_length=6, version_2=True)
    model.threshold.assign(0.001)
    questions = ["where does ada live", "who lives in paris", "what was good"]
    contexts = [_book(400, seed=2), "ada lives in rome", _book(300, seed=3)]
    expected = model.predict_answers(questions, contexts)
    module = TaskServingModule(
        model, write_vocabulary(TOKENS, tmp_path / "vocab.txt"), pair=True, seq_length=16
    )
    logits = module.logits

    def bounded(token_ids, padding_mask, segment_ids):
        check = tf.debugging.assert_less_equal(tf.shape(token_ids)[0], 8)
        with tf.control_dependencies([check]):
            return logits(tf.identity(token_ids), padding_mask, segment_ids)

    module.logits = bounded
    got = module.serve_text(tf.constant(questions), tf.constant(contexts))
    windows = model.preprocessor.windows(_examples(questions, contexts))
    assert len(windows.example_index) > 4 * 8  # several chunks, the last one short
    for i, want in enumerate(expected):
        assert got["answer"][i].numpy().decode() == want["answer"]
        assert (int(got["start"][i]), int(got["end"][i])) == (want["start"], want["end"])
        np.testing.assert_allclose(float(got["score"][i]), want["score"], atol=1e-5)
        np.testing.assert_allclose(float(got["no_answer"][i]), want["no_answer"], atol=1e-5)


def _examples(questions, contexts):
    from electra_tf.tasks.question_answerer_preprocessor import as_examples

    return as_examples(questions, contexts)[0]
