"""Question answering's fine-tuning and prediction speed beside PyTorch, like for like.

`electra-tf bench qa --init ENCODER --train train.json --dev dev.json` runs, each in a
process of its own and interleaved over rounds (`electra_tf.bench.finetune.compare`):

- `--mode train`: `electra_tf` is `electra-tf finetune` on the SQuAD-format files, the
  whole call (windows, the engine's epochs with dev F1 and the no-answer threshold after
  each, checkpoints, the kept model folder); `pytorch` is transformers'
  `BertForQuestionAnswering` in a plain loop on the same windows (this package's
  preprocessor, so the same token ids), in the very batches our `fit` makes
  (`epoch_batches` of the windows' lengths, same seed, each cut to its longest row), with
  the same optimizer settings (torch's fused AdamW, as transformers' `Trainer` makes by
  default: `peer_steps.torch_adamw`), and dev scored after every epoch by the same candidate
  search and threshold search.
- `--mode predict`: answering `--predict-examples` questions of the dev file at batch 32,
  raw strings in and answers out, after one untimed batch: our run folder (Keras), our
  SavedModel export (everything in the graph), and `BertForQuestionAnswering` behind the
  work transformers 4's `question-answering` pipeline did (transformers 5, pinned here,
  removed that pipeline): fast tokenizer windows with character offsets, the model, the
  span search. Its `doc_stride` is an overlap, ours a step: the bench gives it the overlap
  our step leaves for the median question and records both sides' window counts.

The models of `--mode predict` are fresh heads on the encoder (speed does not depend on the
weights). Records: `finetune_bench` lines with `task` "qa", examples/s counting questions.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
import time
from pathlib import Path
from typing import ClassVar

from electra_tf.bench.peer_steps import TORCH_OPTIMIZER, torch_adamw

__all__ = ["QaBenchOptions", "run_once", "IMPLS", "PREDICT_IMPLS"]

IMPLS = ("electra_tf", "pytorch")
PREDICT_IMPLS = ("electra_tf", "electra_tf_export", "pytorch")


@dataclasses.dataclass
class QaBenchOptions:
    """One run (`electra-tf bench qa` flags, one field each)."""

    BENCH: ClassVar[str] = "qa"
    impl: str = "electra_tf"
    mode: str = "train"  # train | predict
    init: str = ""  # the encoder folder (anything --init reads that transformers also reads)
    train: str = ""  # SQuAD-format JSON
    dev: str = ""
    epochs: int = 2
    batch: int = 16
    seq: int = 64
    doc_stride: int = 32
    max_query_length: int = 16
    learning_rate: float = 1e-4
    predict_examples: int = 400
    predict_batch: int = 32
    seed: int = 1  # round r runs seed + r - 1
    round: int = 0
    task: str = "qa"  # echoed in the records


def _seed(options) -> int:
    return options.seed + max(options.round, 1) - 1


def _record(options, **values) -> dict:
    import resource

    return {
        "kind": "finetune_bench",
        "impl": options.impl,
        "task": "qa",
        "mode": options.mode,
        "round": options.round,
        "epochs": options.epochs,
        "batch": options.batch if options.mode == "train" else options.predict_batch,
        "seq": options.seq,
        "batches": "ours",
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        **values,
    }


def _train_electra_tf(options) -> tuple[float, dict]:
    from electra_tf.finetuning.user_task import finetune_files

    settings = {
        "learning_rate": options.learning_rate, "layerwise_decay": 1.0, "defaults": "paper",
        "batch_size": options.batch, "epochs": options.epochs, "max_seq_length": options.seq,
        "doc_stride": options.doc_stride, "max_query_length": options.max_query_length,
        "seed": _seed(options),
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()  # what `electra-tf finetune` runs, the whole call
        report = finetune_files(
            options.init, train=options.train, dev=options.dev, progress=None,
            output_dir=Path(folder) / "run", overrides=[f"{k}={v}" for k, v in settings.items()],
        )  # fmt: skip
        seconds = time.perf_counter() - started
    run = report["runs"][0]
    return seconds, {"dev_f1": run["dev"]["f1"], "best_epoch": run["best_epoch"]}


def windows_and_examples(options, split: str):
    """(the file's `SquadExample`s, their windows by this package's preprocessor)."""
    from electra_tf.datasets import squad
    from electra_tf.tasks.question_answerer_preprocessor import (
        ElectraQuestionAnswererPreprocessor,
    )

    vocabulary = (Path(options.init) / "vocab.txt").read_text("utf-8").splitlines()
    preprocessor = ElectraQuestionAnswererPreprocessor(
        vocabulary, sequence_length=options.seq, doc_stride=options.doc_stride,
        max_query_length=options.max_query_length,
    )  # fmt: skip
    examples = squad.read_squad(getattr(options, split))
    return examples, preprocessor.windows(examples)


def peer_batches(options, windows, epoch: int) -> list:
    """Our `fit`'s training batches (window indices) of `epoch` (from 1)."""
    from electra_tf.data.batching import epoch_batches, row_lengths

    lengths = row_lengths(windows.inputs["padding_mask"])
    return epoch_batches(lengths, options.batch, _seed(options), epoch - 1)


def _train_pytorch(options) -> tuple[float, dict]:
    import numpy as np
    import torch
    from transformers import BertForQuestionAnswering

    # Imported before the timer, as ours' are: batching and the preprocessor import
    # TensorFlow; squad and metrics are read by `_torch_dev_f1`.
    import electra_tf.data.batching  # noqa: F401
    import electra_tf.datasets.squad  # noqa: F401
    import electra_tf.metrics  # noqa: F401
    import electra_tf.tasks.question_answerer_preprocessor  # noqa: F401

    torch.manual_seed(_seed(options))
    torch.set_num_threads(os.cpu_count() or 1)
    started = time.perf_counter()  # every import done before it, as before ours' timer
    train_examples, train = windows_and_examples(options, "train")
    dev_examples, dev = windows_and_examples(options, "dev")
    version_2 = any(not e.answers for e in train_examples + dev_examples)
    model = BertForQuestionAnswering.from_pretrained(options.init)
    optimizer = torch_adamw(
        model.parameters(), lr=options.learning_rate, eps=1e-6, weight_decay=0.0
    )
    steps = math.ceil(len(train.start_positions) / options.batch) * options.epochs
    warm = int(0.1 * steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: s / max(1, warm) if s < warm else max(0.0, (steps - s) / (steps - warm)),
    )

    best = {}
    for epoch in range(1, options.epochs + 1):
        model.train()  # `from_pretrained` returns eval mode: dropout from the first step on
        for index in peer_batches(options, train, epoch):
            index = np.asarray(index)
            loss = model(
                **_torch_tensors(train, index),
                start_positions=torch.tensor(train.start_positions[index]).long(),
                end_positions=torch.tensor(train.end_positions[index]).long(),
            ).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        f1 = _torch_dev_f1(model, dev, dev_examples, version_2)
        if not best or f1 > best["dev_f1"]:
            best = {"dev_f1": f1, "best_epoch": epoch, "optimizer": TORCH_OPTIMIZER}
    return time.perf_counter() - started, best


def _torch_tensors(windows, index) -> dict:
    """transformers' inputs for the windows `index`, cut to their longest row."""
    import torch

    mask = windows.inputs["padding_mask"][index]
    width = int(mask.sum(1).max())
    return {
        "input_ids": torch.tensor(windows.inputs["token_ids"][index][:, :width]).long(),
        "attention_mask": torch.tensor(mask[:, :width]).long(),
        "token_type_ids": torch.tensor(windows.inputs["segment_ids"][index][:, :width]).long(),
    }


def _torch_dev_f1(model, dev, dev_examples, version_2: bool) -> float:
    """The PyTorch model's dev F1, answers found by ours' search (eval mode, no gradients)."""
    import numpy as np
    import torch

    from electra_tf.datasets import squad
    from electra_tf.metrics import squad_scores

    model.eval()
    rows, width = len(dev.start_positions), dev.inputs["token_ids"].shape[1]
    out = {"start_logits": [], "end_logits": []}
    with torch.no_grad():
        for begin in range(0, rows, 128):
            logits = model(**_torch_tensors(dev, np.arange(begin, min(begin + 128, rows))))
            for name in out:
                values = getattr(logits, name).numpy()
                out[name].append(np.pad(values, ((0, 0), (0, width - values.shape[1])),
                                        constant_values=-1e4))  # fmt: skip
    out = {name: np.concatenate(values) for name, values in out.items()}
    # BertForQuestionAnswering has no answerability head: [CLS]'s span is its null score.
    out["answerable_logits"] = -(out["start_logits"][:, 0] + out["end_logits"][:, 0])
    details = squad.answer_details(dev_examples, dev, out, version_2, 20, 30)
    references = {e.qid: e.answers for e in dev_examples}
    if version_2:
        threshold, _ = squad.best_threshold(details, references)
        details = squad.with_threshold(details, threshold)
    answers = {qid: value["answer"] for qid, value in details.items()}
    return float(squad_scores(answers, references)["f1"])


def _pipeline_stride(options, examples) -> int:
    """The overlap (the pipeline's `doc_stride`) that our step leaves for the median question."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(options.init)
    lengths = sorted(
        min(len(tokenizer.tokenize(e.question)), options.max_query_length) for e in examples
    )
    room = options.seq - lengths[len(lengths) // 2] - 3
    return max(1, room - options.doc_stride)


def _predictor(options, examples, folder: Path):
    """(a callable answering `(questions, contexts)`, the pipeline's doc_stride or None)."""
    if options.impl == "pytorch":
        stride = _pipeline_stride(options, examples)
        return _pytorch_answerer(options, stride), stride
    from electra_tf.finetuning.predict import open_predictor
    from electra_tf.tasks.model_folder import write_model_folder
    from electra_tf.tasks.question_answerer import ElectraQuestionAnswerer

    model = ElectraQuestionAnswerer.from_source(
        options.init, sequence_length=options.seq, doc_stride=options.doc_stride,
        max_query_length=options.max_query_length, version_2=True,
    )  # fmt: skip
    info = {"task": "qa", "kind": "question_answering", "labels": [], "pair": True}
    write_model_folder(model, folder / "run" / "model", info)
    target = folder / "run"
    if options.impl == "electra_tf_export":
        from electra_tf.tasks.export import export_finetuned

        target = export_finetuned(model, info, folder / "export", model_name="bench")
    predictor = open_predictor(target)
    return (lambda questions, contexts: predictor(list(questions), list(contexts))), None


def _pytorch_answerer(options, stride: int):
    """Question + context strings -> answers, as transformers 4's `question-answering`
    pipeline did it (removed in transformers 5): the fast tokenizer's overflowing windows
    with character offsets, `BertForQuestionAnswering` on `predict_batch` windows at a time,
    per window the most probable span of the context (start and end probabilities, at most
    30 tokens) against [CLS]'s, the best window's span back to characters."""
    import numpy as np
    import torch
    from transformers import AutoTokenizer, BertForQuestionAnswering

    torch.set_num_threads(os.cpu_count() or 1)
    tokenizer = AutoTokenizer.from_pretrained(options.init)
    model = BertForQuestionAnswering.from_pretrained(options.init).eval()
    band = np.triu(np.tril(np.ones((options.seq, options.seq), bool), 29))  # end - start < 30

    def softmax(x):
        x = np.exp(x - x.max(-1, keepdims=True))
        return x / x.sum(-1, keepdims=True)

    def call(questions, contexts):
        encoded = tokenizer(
            list(questions), list(contexts), truncation="only_second", max_length=options.seq,
            stride=stride, return_overflowing_tokens=True, return_offsets_mapping=True,
            padding="longest", return_tensors="pt",
        )  # fmt: skip
        owner = encoded.pop("overflow_to_sample_mapping").numpy()
        offsets = encoded.pop("offset_mapping").numpy()
        starts, ends = [], []
        with torch.no_grad():
            for begin in range(0, len(owner), options.predict_batch):
                part = {k: v[begin : begin + options.predict_batch] for k, v in encoded.items()}
                out = model(**part)
                starts.append(out.start_logits.numpy())
                ends.append(out.end_logits.numpy())
        starts, ends = np.concatenate(starts), np.concatenate(ends)
        best = [(-1.0, 0, 0, 1.0)] * len(questions)  # (score, start char, end char, null)
        for window in range(len(owner)):
            context = np.array([i == 1 for i in encoded.sequence_ids(window)])
            context[0] = True  # [CLS]: the null answer
            p_start = softmax(np.where(context, starts[window], -1e4))
            p_end = softmax(np.where(context, ends[window], -1e4))
            null = float(p_start[0] * p_end[0])
            p_start[0] = p_end[0] = 0.0
            width = len(p_start)
            scores = np.outer(p_start, p_end) * band[:width, :width]
            first, last = np.unravel_index(int(scores.argmax()), scores.shape)
            score, question = float(scores[first, last]), int(owner[window])
            if score > best[question][0]:
                span = (int(offsets[window][first][0]), int(offsets[window][last][1]))
                best[question] = (score, *span, best[question][3])
            best[question] = (*best[question][:3], min(null, best[question][3]))
        return [
            {"answer": c[s:e] if score > null else "", "start": s, "end": e, "score": score}
            for (score, s, e, null), c in zip(best, contexts, strict=True)
        ]

    return call


def _predict(options) -> dict:
    examples, windows = windows_and_examples(options, "dev")
    examples = examples[: options.predict_examples]
    questions = [e.question for e in examples]
    contexts = [e.context for e in examples]
    size = options.predict_batch
    with tempfile.TemporaryDirectory() as folder:
        answer, stride = _predictor(options, examples, Path(folder))
        answer(questions[:size], contexts[:size])  # warm-up: traces, first allocations
        started = time.perf_counter()
        done = 0
        for begin in range(0, len(questions), size):
            done += len(answer(questions[begin : begin + size], contexts[begin : begin + size]))
        seconds = time.perf_counter() - started
    ours = int(sum(1 for i in windows.example_index if i < len(examples)))
    values = {"seconds": round(seconds, 2), "examples": done,
              "examples_per_s": round(done / seconds, 1), "windows_ours": ours}  # fmt: skip
    if stride is not None:
        values.update(pipeline_doc_stride=stride, windows_pipeline=_hf_windows(options, examples,
                                                                              stride))  # fmt: skip
    return values


def _hf_windows(options, examples, stride: int) -> int:
    """How many windows the pipeline's tokenizer call makes of `examples`."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(options.init)
    encoded = tokenizer(
        [e.question for e in examples], [e.context for e in examples], truncation="only_second",
        max_length=options.seq, stride=stride, return_overflowing_tokens=True,
    )  # fmt: skip
    return len(encoded["input_ids"])


_TRAIN = {"electra_tf": _train_electra_tf, "pytorch": _train_pytorch}


def run_once(options: QaBenchOptions) -> dict:
    """One implementation's run in this process; returns its record."""
    started = time.perf_counter()
    if options.mode == "predict":
        return _record(options, **_predict(options),
                       wall_seconds=round(time.perf_counter() - started, 1))  # fmt: skip
    seconds, scores = _TRAIN[options.impl](options)
    _, windows = windows_and_examples(options, "train")
    questions = len(set(windows.example_index.tolist()))
    count = len(windows.start_positions)
    return _record(
        options,
        seed=_seed(options),
        train_windows=count,
        train_questions=questions,
        train_seconds=round(seconds, 2),
        examples_per_s=round(count * options.epochs / seconds, 2),
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in scores.items()},
        wall_seconds=round(time.perf_counter() - started, 1),
    )
