"""SQuAD: reading, windows, span decoding, and a fine-tune that memorises a toy file."""

import json

import numpy as np
import pytest
from helpers import scratch_init, shuffle_warnings

from electra_tf.data.tokenizer import ElectraTokenizer
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets.readers import (
    ReadReport,
)
from electra_tf.datasets.sources import task_splits
from electra_tf.datasets.squad import best_spans, make_features, predict_answers, read_squad
from electra_tf.datasets.tasks import get_task
from electra_tf.finetuning.run import finetune
from electra_tf.tasks.config import FinetuneConfig

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
    # The fine-tuning driver end to end on a span task (reader, windows, span model,
    # training, decoding, EM/F1) on the toy file as both train and dev: q1 and q2 have
    # spans, q3 has none, q4's answer is not in its context and is skipped in training. A
    # from-scratch encoder can learn the three questions by heart.
    for name in ("train-v2.0.json", "dev-v2.0.json"):
        (tmp_path / name).write_text(json.dumps(SQUAD))
    tokenizer = _squad_tokenizer(tmp_path)
    init = scratch_init(len(tokenizer.vocabulary), tmp_path / "v.txt")
    config = FinetuneConfig(
        task="squad2",
        defaults="paper",  # the squad2 recipe's, as `--task squad2` gives
        learning_rate=1e-2,
        layerwise_decay=1.0,
        epochs=200,
        batch_size=4,
        max_seq_length=32,
        max_query_length=16,
        dropout=0.0,
    )
    read = ReadReport()
    task = get_task("squad2")
    splits = task_splits(task, data_dir=tmp_path, report=read)
    report = finetune(task, init, splits, config, tmp_path / "out", progress=None)
    losses = report["runs"][0]["train_loss"]
    assert losses[-1] < 0.1 * losses[0]
    # Dev counts q4 too, whose answer ("Seattle") is not in its context: 3 of 4 right.
    summary = report["summary"]
    assert summary["dev/exact"]["median"] == 75.0 and summary["dev/f1"]["median"] == 75.0
    assert summary["dev/HasAns_exact"]["median"] == pytest.approx(200 / 3)  # q1, q2 of 3
    assert summary["dev/NoAns_exact"]["median"] == 100.0  # q3 left unanswered
    assert read.skipped_ids == ["q4"]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["runs"] == report["runs"]
    assert "dev/exact" in (tmp_path / "out" / "results.md").read_text()  # a table, as for GLUE
    assert not shuffle_warnings(recwarn)


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
