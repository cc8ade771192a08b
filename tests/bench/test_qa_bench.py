"""bench qa: its runs' commands parse back, the PyTorch loop gets our very batches of windows,
and the PyTorch answerer returns spans of the context at their character offsets."""

import dataclasses
import json

import numpy as np

from electra_tf.bench import finetune
from electra_tf.bench import question_answering as qa
from electra_tf.cli import build_parser

WORDS = "ada lovelace wrote the first program in london who where did paris went to".split()


def _squad_file(path, rows):
    data = [{"title": "t", "paragraphs": [
        {"context": context, "qas": [{"id": f"q{n}", "question": question, "answers": [
            {"text": answer, "answer_start": context.index(answer)}] if answer else [],
            "is_impossible": not answer}]}
        for n, (question, context, answer) in enumerate(rows)]}]  # fmt: skip
    path.write_text(json.dumps({"version": "v2.0", "data": data}))
    return str(path)


def test_a_qa_runs_command_parses_back_to_its_options():
    options = qa.QaBenchOptions(
        mode="predict", init="/m", train="/t.json", dev="/d.json", epochs=3, doc_stride=24
    )
    command = finetune._command(options, "pytorch", 2)
    assert command[command.index("electra_tf.bench") + 1] == "qa"
    args = build_parser().parse_args(["bench", *command[command.index("qa") :]])
    parsed = qa.QaBenchOptions(
        **{f.name: getattr(args, f.name) for f in dataclasses.fields(qa.QaBenchOptions)}
    )
    assert parsed == qa.QaBenchOptions(
        impl="pytorch", mode="predict", init="/m", train="/t.json", dev="/d.json", epochs=3,
        doc_stride=24, round=2,
    )  # fmt: skip
    assert qa._seed(parsed) == 2


def test_the_pytorch_loop_trains_on_the_windows_and_batches_our_fit_makes(tmp_path, encoder):
    from electra_tf.data.batching import batch_dataset

    context = " ".join(WORDS * 3)
    rows = [(f"who {w}?", context[: 80 + 12 * n], w if n % 3 else "") for n, w in enumerate(WORDS)]
    train = _squad_file(tmp_path / "train.json", rows * 3)
    options = qa.QaBenchOptions(init=encoder, train=train, batch=4, seq=32, doc_stride=8,
                                max_query_length=6, seed=3, round=2)  # fmt: skip
    _, windows = qa.windows_and_examples(options, "train")
    count = len(windows.start_positions)
    assert count > len(rows) * 3  # contexts of several windows
    # What ElectraQuestionAnswerer.fit_packed trains on: the dataset of the run's seed.
    ours = batch_dataset(windows.inputs, np.arange(count), batch_size=4, seed=4, epochs=range(2))
    trained = [(x["padding_mask"].shape[1], sorted(y.numpy().tolist())) for x, y in ours]
    given = [
        sorted(np.asarray(i).tolist()) for e in (1, 2) for i in qa.peer_batches(options, windows, e)
    ]
    assert [r for _, r in trained] == given
    lengths = windows.inputs["padding_mask"].sum(1)
    assert [w for w, _ in trained] == [int(lengths[g].max()) for g in given]  # padded alike


def test_the_pytorch_answerer_returns_spans_of_each_context(encoder):
    options = qa.QaBenchOptions(init=encoder, seq=24, max_query_length=6, predict_batch=3)
    answer = qa._pytorch_answerer(options, stride=4)
    contexts = [" ".join(WORDS[n:] + WORDS[:n]) * 2 for n in range(5)]  # several windows each
    questions = ["who wrote the program?", "where?", "did ada went to paris?", "who", "the"]
    found = answer(questions, contexts)
    assert len(found) == 5
    for row, context in zip(found, contexts, strict=True):
        assert 0 <= row["start"] < row["end"] <= len(context) and 0 < row["score"] <= 1
        assert row["answer"] in ("", context[row["start"] : row["end"]])
        words = context[row["start"] : row["end"]].split()
        assert words and all(w in WORDS for w in words)  # never a piece of the question


def test_the_pytorch_loop_trains_with_dropout_and_scores_without(tmp_path, encoder, monkeypatch):
    from transformers import BertForQuestionAnswering

    seen = []  # (training mode, a training call) of every forward pass
    forward = BertForQuestionAnswering.forward

    def noted(self, *args, **kwargs):
        seen.append((self.training, "start_positions" in kwargs))
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(BertForQuestionAnswering, "forward", noted)
    context = " ".join(WORDS * 2)
    rows = [(f"who {w}?", context, w if n % 3 else "") for n, w in enumerate(WORDS)]
    train = _squad_file(tmp_path / "train.json", rows)
    options = qa.QaBenchOptions(init=encoder, train=train, dev=train, batch=4, seq=32,
                                doc_stride=8, max_query_length=6, epochs=2)  # fmt: skip
    qa._train_pytorch(options)
    # from_pretrained returns eval mode; the loop must switch dropout on before epoch 1.
    assert sum(training for _, training in seen) > 4 and any(not t for _, t in seen)
    assert all(mode == training for mode, training in seen)


def test_the_pytorch_peers_adamw_is_fused_and_steps_as_torchs_own_loop():
    import copy

    import torch

    from electra_tf.bench.peer_steps import torch_adamw

    torch.manual_seed(0)
    fused_model = torch.nn.Linear(5, 3)
    loop_model, start = copy.deepcopy(fused_model), fused_model.weight.detach().clone()
    settings = {"lr": 0.05, "eps": 1e-6, "weight_decay": 0.01}
    fused = torch_adamw(fused_model.parameters(), **settings)
    loop = torch.optim.AdamW(loop_model.parameters(), foreach=False, **settings)
    assert fused.defaults["fused"] is True and not loop.defaults["fused"]
    x = torch.randn(4, 5)
    for _ in range(3):
        for model, optimizer in ((fused_model, fused), (loop_model, loop)):
            optimizer.zero_grad()
            (model(x) ** 2).sum().backward()
            optimizer.step()
    for a, b in zip(fused_model.parameters(), loop_model.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    assert torch.max(torch.abs(fused_model.weight - start)) > 0.05  # three steps moved it
