"""A linear probe: a cheap, low-noise usefulness figure for any encoder.

Fine-tuning a small encoder on a small task varies by several points from seed
to seed, which hides the differences pre-training makes at CPU scale. A linear
probe freezes the encoder, takes two features per example (the [CLS] vector
and the mean of the sequence output over real tokens, concatenated), and fits
an L2-regularised logistic regression (scikit-learn) on the task's train
split, choosing the regularisation strength on dev when a test split reports
the figure, or by cross-validation on train when dev is the figure (GLUE's
tasks have no labelled test split); it reports dev and test accuracy. Beside it, on the same split:

- the same architecture at random initialisation, over several seeds (mean and
  standard deviation): what the architecture alone gives;
- a bag-of-words logistic regression on the raw text (no encoder): what word
  identity alone gives.

An encoder is useful for the task when its probe beats random initialisation
by more than the seeds' spread (`beats_random`).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from electra_tf.config import ConfigError
from electra_tf.data.inputs import pack_inputs
from electra_tf.datasets.readers import ReadReport
from electra_tf.datasets.tasks import Task
from electra_tf.tasks.initialization import Initialization

__all__ = [
    "C_GRID",
    "encoder_features",
    "fit_probe",
    "bag_of_words_probe",
    "probe_encoder",
    "probe_report",
    "beats_random",
    "probe_table",
    "probe_task",
    "check_splits",
    "MIN_EVAL_EXAMPLES",
]

#: Inverse L2 strengths tried on dev (scikit-learn's C; larger = weaker regularisation), for
#: standardised encoder features and for 0/1 word-presence features.
C_GRID = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
BOW_C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)


def encode_examples(
    examples, tokenizer, task, max_seq_length: int, batch: int = 2048
) -> tuple[dict, np.ndarray]:
    """Tokenized, packed inputs (numpy, int32 `[N, max_seq_length]`) and labels of examples."""
    features = {"token_ids": [], "padding_mask": [], "segment_ids": []}
    for start in range(0, len(examples), batch):
        chunk = examples[start : start + batch]
        a = tokenizer.tokenize([e.text_a for e in chunk])
        b = tokenizer.tokenize([e.text_b for e in chunk]) if task.pair else None
        packed = pack_inputs(
            a,
            b,
            sequence_length=max_seq_length,
            cls_id=tokenizer.cls_id,
            sep_id=tokenizer.sep_id,
            pad_id=tokenizer.pad_id,
        )
        for key in features:
            features[key].append(packed[key].numpy())
    features = {
        k: np.concatenate(v) if v else np.zeros((0, max_seq_length), np.int32)
        for k, v in features.items()
    }
    labels = np.asarray([e.label for e in examples], np.int32)  # class ids: the probe classifies
    return features, labels


def encoder_features(encoder, inputs: dict, batch_size: int = 128) -> np.ndarray:
    """[CLS] vector and mean over real tokens, concatenated: float32 `[N, 2 * hidden]`.

    Examples are batched by length and each batch is cut to its longest example,
    which gives the same outputs as the full padded length (padding is masked)
    at a fraction of the cost.
    """
    import tensorflow as tf

    lengths = inputs["padding_mask"].sum(axis=1)
    order = np.argsort(lengths, kind="stable")
    hidden = encoder.hidden_dim
    features = np.zeros((len(order), 2 * hidden), np.float32)

    spec = {key: tf.TensorSpec([None, None], tf.int32) for key in inputs}

    @tf.function(input_signature=[spec])
    def forward(batch):
        sequence = tf.cast(encoder(batch, training=False), tf.float32)  # [B, S, H]
        mask = tf.cast(batch["padding_mask"], tf.float32)[:, :, None]
        mean = tf.reduce_sum(sequence * mask, axis=1) / tf.maximum(tf.reduce_sum(mask, 1), 1.0)
        return tf.concat([sequence[:, 0], mean], axis=-1)

    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        width = max(int(lengths[rows].max()), 1)
        batch = {k: tf.constant(v[rows, :width], tf.int32) for k, v in inputs.items()}
        features[rows] = forward(batch).numpy()
    return features


def fit_probe(
    train, dev, test=None, grid=C_GRID, standardize: bool = True, folds: int = 3, extra=None
) -> dict:
    """L2 logistic regression; C chosen on dev when a test split reports, else on train.

    With a test split, dev chooses C and test is the figure reported. Without one (GLUE's
    tasks), dev is the figure reported, so it must not choose: C is chosen by `folds`-fold
    stratified cross-validation on train and dev is scored once.

    Args:
        train, dev, test: (features `[N, D]`, labels `[N]`) each; test may be None.
        grid: the C values tried (the smallest of equally good ones wins).
        standardize: scale each feature to zero mean and unit variance on train first.
        folds: cross-validation folds when there is no test split.
        extra: more evaluation splits, {name: (features, labels)}, each scored once.

    Returns:
        {"C", "C_chosen_on", "dev_accuracy", "test_accuracy" (if test),
        "<name>_accuracy" for each of `extra`}.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def model(c):
        regression = LogisticRegression(C=c, max_iter=3000)
        return make_pipeline(StandardScaler(), regression) if standardize else regression

    best = None
    for c in grid:
        if test is not None:
            fitted = model(c).fit(train[0], train[1])
            score = float(fitted.score(dev[0], dev[1]))
        else:
            splitter = StratifiedKFold(folds, shuffle=True, random_state=0)
            score = float(cross_val_score(model(c), train[0], train[1], cv=splitter).mean())
            fitted = None
        if best is None or score > best[0]:
            best = (score, c, fitted)
    _, c, fitted = best
    fitted = fitted if fitted is not None else model(c).fit(train[0], train[1])
    result = {
        "C": c,
        "C_chosen_on": "dev" if test is not None else f"{folds}-fold cross-validation on train",
        "dev_accuracy": float(fitted.score(dev[0], dev[1])),
    }
    if test is not None:
        result["test_accuracy"] = float(fitted.score(test[0], test[1]))
    for name, (x, y) in (extra or {}).items():
        result[f"{name}_accuracy"] = float(fitted.score(x, y))
    return result


def _texts(examples) -> list[str]:
    return [e.text_a if e.text_b is None else f"{e.text_a} {e.text_b}" for e in examples]


def bag_of_words_probe(splits: dict, grid=BOW_C_GRID) -> dict:
    """`fit_probe` on 0/1 word-presence features of the raw text (no encoder)."""
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(binary=True).fit(_texts(splits["train"]))

    def xy(name):
        examples = splits[name]
        return vectorizer.transform(_texts(examples)), np.asarray([e.label for e in examples])

    test = xy("test") if splits.get("test") else None
    extra = {name: xy(name) for name in _extra_splits(splits)}
    return fit_probe(xy("train"), xy("dev"), test, grid, standardize=False, extra=extra)


def _extra_splits(splits: dict) -> list[str]:
    """Evaluation splits besides train, dev and test (MNLI's dev_mismatched)."""
    return [name for name, examples in splits.items()
            if name not in ("train", "dev", "test") and examples]  # fmt: skip


def named_dev_splits(splits: dict) -> dict:
    """`splits` with a "dev" split: a task whose dev splits are named (MNLI's dev_matched
    and dev_mismatched) gets its first as "dev"; the others stay, scored as extras."""
    if splits.get("dev") or not any(name.startswith("dev_") for name in splits):
        return splits
    first = next(name for name in splits if name.startswith("dev_"))
    return {("dev" if name == first else name): examples for name, examples in splits.items()}


def _check_task(task: Task) -> None:
    if task.kind != "classification":
        raise ConfigError(
            f"The probe scores classification tasks; {task.name} is a {task.kind} task "
            "(try movie_reviews)."
        )


def probe_encoder(encoder, encoded: dict, grid=C_GRID) -> dict:
    """`fit_probe` on `encoder_features` of the encoded splits {name: (inputs, labels)}."""
    features = {name: (encoder_features(encoder, x), y) for name, (x, y) in encoded.items()}
    extra = {n: f for n, f in features.items() if n not in ("train", "dev", "test")}
    return fit_probe(features["train"], features["dev"], features.get("test"), grid, extra=extra)


#: Fewer examples than this in an evaluated split earn a warning: accuracy moves in steps
#: of 1 / n, so a handful of examples scores 1.0000 by luck and tells encoders apart by none.
MIN_EVAL_EXAMPLES = 100


def check_splits(task: Task, splits: dict, say) -> list[str]:
    """Fails in one sentence on splits a probe cannot fit; returns (and says) warnings.

    Raises:
        ConfigError: the train or dev split is empty, or train holds one class only.
    """
    for name in ("train", "dev"):
        if not splits.get(name):
            raise ConfigError(
                f"The probe of {task.name} needs examples in its {name} split, and it has "
                "none; check the task's file (empty, or every row skipped)."
            )
    classes = sorted({e.label for e in splits["train"]})
    if len(classes) < 2:
        raise ConfigError(
            f"The probe of {task.name} needs two classes in its train split, and all "
            f"{len(splits['train'])} examples have label {classes[0]!r}; give a file with both."
        )
    warnings = [
        f"the {name} split has only {len(examples)} examples, so its accuracy moves in "
        f"steps of {1 / len(examples):.4f} and cannot tell encoders apart (use at least "
        f"{MIN_EVAL_EXAMPLES})"
        for name, examples in splits.items()
        if name in ("dev", "test") and 0 < len(examples) < MIN_EVAL_EXAMPLES
    ]
    for warning in warnings:
        say(f"[probe] warning: {warning}.")
    return warnings


def _summary(rows, key) -> dict:
    values = np.asarray([row[key] for row in rows], np.float64)
    return {
        "metric": key,
        "mean": float(values.mean()) if len(values) else float("nan"),
        "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
        "seeds": len(values),
    }


def _random_seeds(init, encoded, random_seeds, add) -> list[dict]:
    import keras

    def probe(seed):
        keras.utils.set_random_seed(seed)
        random = dataclasses.replace(init, weights=None).build_encoder(dropout=0.0)
        return probe_encoder(random, encoded)

    return [
        add(f"random init (seed {seed})", lambda seed=seed: probe(seed))
        for seed in range(random_seeds)
    ]


def probe_report(
    init: Initialization,
    task: Task,
    splits: dict,
    *,
    random_seeds: int = 3,
    others: dict | None = None,
    max_seq_length: int = 128,
    log=None,
) -> dict:
    """The probe of `init` beside bag-of-words and the same architecture at random init.

    Args:
        init: the encoder to probe.
        task: a classification task.
        splits: {"train", "dev"[, "test"]: [Example]}.
        random_seeds: random initialisations probed (mean and std reported).
        others: more encoders to probe, {label: Initialization}, sharing `init`'s vocabulary.
        max_seq_length: the packed length.
        log: called with one line per probe.

    Returns:
        {"task", "rows": [{"encoder", "dev_accuracy", "test_accuracy", ...}], "random",
        "beats_random", "warnings" (`check_splits`), "seconds"}.
    """
    from electra_tf.data.tokenizer import ElectraTokenizer

    _check_task(task)
    started = time.perf_counter()
    say = log or (lambda _: None)
    splits = named_dev_splits(splits)
    warnings = check_splits(task, splits, say)
    tokenizer = ElectraTokenizer(init.vocab_file, lower_case=init.lower_case)
    encoded = {
        name: encode_examples(examples, tokenizer, task, max_seq_length)
        for name, examples in splits.items()
        if examples
    }
    rows = []

    def add(label, compute):
        begun = time.perf_counter()
        row = {"encoder": label, **compute()}
        rows.append({**row, "seconds": round(time.perf_counter() - begun, 1)})
        say(
            f"[probe] {label}: dev {row['dev_accuracy']:.4f} test {row.get('test_accuracy', 0):.4f}"
        )
        return row

    add("bag of words", lambda: bag_of_words_probe(splits))
    seeds = _random_seeds(init, encoded, random_seeds, add)
    for label, other in [*(others or {}).items(), (init.source, init)]:
        main = add(label, lambda o=other: probe_encoder(o.build_encoder(dropout=0.0), encoded))
    key = "test_accuracy" if "test" in encoded else "dev_accuracy"
    random_summary = _summary(seeds, key)
    return {
        "task": task.name,
        "encoder": init.source,
        "rows": rows,
        "random": random_summary,
        "beats_random": beats_random(main[key], random_summary),
        "warnings": warnings,
        "seconds": round(time.perf_counter() - started, 1),
    }


def beats_random(accuracy: float, random: dict) -> bool:
    """Whether `accuracy` beats the random-init mean by more than twice the seeds' std."""
    return bool(accuracy - random["mean"] > 2.0 * random["std"])


def probe_table(report: dict) -> str:
    """A markdown table of a `probe_report`: each encoder's dev and test accuracy."""
    lines = ["| encoder | dev accuracy | test accuracy | C |", "|---|---|---|---|"]
    for row in report["rows"]:
        test = row.get("test_accuracy")
        lines.append(
            f"| {row['encoder']} | {row['dev_accuracy']:.4f} | "
            f"{'' if test is None else f'{test:.4f}'} | {row['C']:g} |"
        )
    random = report["random"]
    lines.append(
        f"| random init, mean +- std over {random['seeds']} seeds ({random['metric']}) | | "
        f"{random['mean']:.4f} +- {random['std']:.4f} | |"
    )
    return "\n".join(lines) + "\n"


def probe_task(
    task_name: str,
    init_spec: str,
    *,
    random_seeds: int = 3,
    vocab_file=None,
    data_dir=None,
    movie_file=None,
    fetch_dir=None,
    log=None,
) -> dict:
    """`probe_report` of the encoder `init_spec` names on the task `task_name` names.

    The task's data are read as `electra-tf finetune` reads them (`task_splits`; the
    movie-review snippets are downloaded into `fetch_dir` when no file is given).
    """
    from electra_tf.datasets.sources import task_splits
    from electra_tf.datasets.tasks import get_task
    from electra_tf.tasks.initialization import load_initialization

    task = get_task(task_name)
    _check_task(task)
    init = load_initialization(init_spec, vocab_file)
    read = ReadReport()
    splits = task_splits(
        task, data_dir=data_dir, movie_file=movie_file, fetch_dir=fetch_dir, report=read
    )
    skipped = dict(read.skipped)
    unlabelled = read.read - sum(len(examples) for examples in splits.values())
    if unlabelled > 0:  # movie reviews: a mean rating of exactly 0 is neither class
        skipped["rows_without_a_class (rating 0)"] = unlabelled
    (log or (lambda _: None))(
        f"[probe] {task.name}: {read.read} rows read, "
        + (", ".join(f"{n} skipped: {why}" for why, n in skipped.items()) or "none skipped")
    )
    report = probe_report(init, task, splits, random_seeds=random_seeds, log=log)
    report["rows_read"], report["rows_skipped"] = read.read, skipped
    report["table"] = probe_table(report)
    return report
