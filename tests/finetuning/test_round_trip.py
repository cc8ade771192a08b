"""Every kind round-trips in fresh processes: fine-tune -> predict on the run -> --init from
the run -> export -> predict on the export with every input layout -> raw serving_default."""

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import functions_run_eagerly, scratch_init, scratch_init_one_layer

from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
from electra_tf.datasets.files import Columns
from electra_tf.serving.fresh_process import CLASSIFY_SCRIPT
from electra_tf.tasks.registry import kind_names

WORDS = "the food was good bad slow quick ada met bob in rome paris".split()
TEXTS = ["the food was good", "bad slow food", "ada met bob in rome", "quick"]


def _label(kind, i, text):
    good = "good" in text or "quick" in text
    if kind == "classification":
        return "yes" if good else "no"
    if kind == "multi_label":
        return ["good"] if good else ["bad", "slow"] if "slow" in text else []
    return 1.5 if good else -0.5  # regression


def _texts(n, seed):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 7)))) for _ in range(n)]


def _write_table(path, rows, pair):
    path = Path(path)
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path
    sep = "\t" if path.suffix == ".tsv" else ","
    names = list(rows[0])
    lines = [sep.join(names)]
    for r in rows:
        lines.append(sep.join("|".join(v) if isinstance(v, list) else str(v) for v in r.values()))
    path.write_text("\n".join(lines) + "\n")
    return path


def _conll(path, sentences):
    blocks = ["\n".join(f"{w} {t}" for w, t in zip(words, tags)) for words, tags in sentences]
    Path(path).write_text("\n\n".join(blocks) + "\n")
    return path


def _tagged(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = list(rng.choice(WORDS, size=int(rng.integers(1, 7))))
        tags = ["B-PER" if w in ("ada", "bob") else "B-LOC" if w in ("rome", "paris") else "O"
                for w in words]  # fmt: skip
        out.append((words, tags))
    return out


def _finetune(tmp_path, kind, vocab, make_init=scratch_init, epochs=1):
    import electra_tf.finetuning.user_task as user_task
    from electra_tf.finetuning.user_task import finetune_files

    folder = tmp_path / kind
    folder.mkdir()
    if kind == "tagging":
        train = _conll(folder / "train.conll", _tagged(48, 0))
        dev = _conll(folder / "dev.conll", _tagged(16, 1))
        columns = Columns()
    else:
        pair = kind == "classification"

        def rows(n, seed):
            out = []
            for i, text in enumerate(_texts(n, seed)):
                row = {"body": text}
                if pair:
                    row["second"] = TEXTS[i % len(TEXTS)]
                row["target"] = _label(kind, i, text)
                out.append(row)
            return out

        train = _write_table(folder / "train.jsonl", rows(48, 0), pair)
        dev = _write_table(folder / "dev.jsonl", rows(16, 1), pair)
        columns = Columns("body", "second" if pair else None, "target")
    init = make_init(len(SPECIAL_TOKENS) + len(WORDS), vocab)
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        finetune_files(
            "scratch", train=train, dev=dev, columns=columns, kind=kind, output_dir=folder / "run",
            overrides=(f"epochs={epochs}", "learning_rate=1e-2", "batch_size=16",
                       "max_seq_length=16"),
            progress=None,
        )  # fmt: skip
    finally:
        user_task.load_initialization = original
    return folder


def _inputs(folder, kind):
    """Every layout `predict --input` reads for this kind, holding TEXTS."""
    pair = kind == "classification"
    column = "text" if kind == "tagging" else "body"  # the run's own text column
    rows = [{column: t, **({"second": TEXTS[-1 - i]} if pair else {})} for i, t in enumerate(TEXTS)]
    files = {
        s: str(_write_table(folder / f"in{s}", rows, pair)) for s in (".csv", ".tsv", ".jsonl")
    }
    if kind == "tagging":
        files[".conll"] = str(_conll(folder / "in.conll", [(t.split(), ["O"] * 9) for t in TEXTS]))
    return files


#: Runs CLASSIFY_SCRIPT (as adapted by `_raw_script`) once per export, all in one process:
#: stdin a JSON list of [folder, texts, pairs]; prints the list of each export's rows.
RAW_LOOP = """
import contextlib, io, json, sys
script, jobs, out = sys.argv[1], json.load(sys.stdin), []
for folder, texts, pairs in jobs:
    sys.argv, sys.stdin = ["-c", folder], io.StringIO(json.dumps([texts, pairs]))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(script, {"__name__": "__main__"})
    out.append(json.loads(printed.getvalue().strip().splitlines()[-1]))
assert "electra_tf" not in sys.modules
print(json.dumps(out))
"""


def _raw_script():
    """CLASSIFY_SCRIPT taking [texts, pairs] (pairs via a JSON object) and list outputs."""
    script = CLASSIFY_SCRIPT.replace(
        "served(text=tf.constant(texts))",
        "served(**({'text': tf.constant(texts)} if pairs is None else "
        "{'text': tf.constant(texts), 'text_pair': tf.constant(pairs)}))",
    ).replace("texts = json.load(sys.stdin)", "texts, pairs = json.load(sys.stdin)")
    return script.replace(
        "row[name] = value.decode() if isinstance(value, bytes) else value",
        "row[name] = [v.decode() if isinstance(v, bytes) else v for v in value] "
        "if isinstance(value, list) else value.decode() if isinstance(value, bytes) else value",
    )


def _raw_serving(jobs, cwd):
    """serving_default of each export in `jobs` ([folder, texts, pairs] each), all in ONE
    process that never imports electra_tf (CLASSIFY_SCRIPT run once per export)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", RAW_LOOP, _raw_script()], input=json.dumps(jobs),
        capture_output=True, text=True, env=env, timeout=600, cwd=str(cwd),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _close(a, b, where):
    """Two prediction rows agree: the same keys (but `row`, a file's row number, which texts
    given on the command line have not), names exactly, numbers within 1e-5."""
    assert set(a) - {"row"} == set(b) - {"row"}, (where, sorted(set(a) ^ set(b)))
    for key in set(a) - {"row"}:  # row numbers differ by layout (CSV: a header)
        x, y = a[key], b[key]
        if isinstance(x, dict):
            assert x.keys() == y.keys(), where
            np.testing.assert_allclose(list(x.values()), list(y.values()), atol=1e-5, err_msg=where)
        elif isinstance(x, float) or (isinstance(x, list) and x and isinstance(x[0], float)):
            np.testing.assert_allclose(x, y, atol=1e-5, err_msg=where)
        else:
            assert x == y, (where, key, x, y)


def test_close_requires_the_same_outputs_on_both_sides():
    # Issue 56, case 12: a row missing an output on one side passed.
    row = {"row": 2, "text": "quick", "label": "yes", "probabilities": {"no": 0.25, "yes": 0.75}}
    _close(row, {k: v for k, v in row.items() if k != "row"}, "texts")
    for missing in ("label", "probabilities", "text"):
        short = {k: v for k, v in row.items() if k != missing}
        with pytest.raises(AssertionError):
            _close(row, short, missing)
        with pytest.raises(AssertionError):
            _close(short, row, missing)
    with pytest.raises(AssertionError):
        _close(row, {**row, "probabilities": {"no": 0.25, "yes": 0.7}}, "numbers")


# The default suite gives each kind ONE file layout (rotated, so every layout and every kind is
# still read, through the run and through its export); the slow twin gives every kind all of them.
ROTATED = {"classification": ".csv", "multi_label": ".tsv", "regression": ".jsonl",
           "tagging": ".conll"}  # fmt: skip


def test_every_kind_round_trips_through_fresh_processes(tmp_path):
    """One rotated layout per kind, one-layer encoders fine-tuned eagerly, exported here and
    ONE fresh process (the raw serving_default first, then --init and predict); the full form
    (every layout, the two-layer toy encoder fine-tuned traced, the export and the raw
    serving each in a fresh process) is
    test_every_kind_round_trips_every_layout_through_fresh_processes."""
    _round_trip(
        tmp_path,
        lambda kind, files: {ROTATED[kind]: files[ROTATED[kind]]},
        make_init=scratch_init_one_layer,
        one_child=True,
        eager=True,
    )


@pytest.mark.slow
def test_every_kind_round_trips_every_layout_through_fresh_processes(tmp_path):
    _round_trip(tmp_path, lambda kind, files: files)


def _raw_job(spec):
    """[the export's newest version folder, texts, pairs] for the raw serving loop."""
    versions = sorted(Path(spec["export"]).glob("*/*/saved_model.pb"))
    return [str(versions[-1].parent), TEXTS, spec["pairs"]]


def _round_trip(tmp_path, layouts, make_init=scratch_init, one_child=False, eager=False):
    """Fine-tune each kind, then (one fresh process) --init, export and predict on the run and
    on the export with the file layouts `layouts(kind, files)` keeps and command-line texts; all
    agree with the first layout's rows on the run, and with the raw serving signature (another
    fresh process). `one_child`: export here, and serve raw in the same fresh process, first,
    before it imports electra_tf. `eager`: the fine-tunings' steps run eagerly."""
    from electra_tf.cli import main

    vocab = write_vocabulary(list(SPECIAL_TOKENS) + WORDS, tmp_path / "vocab.txt")
    # Question answering reads other inputs: its round trip is in test_question_answering.py.
    kinds = [k for k in kind_names(from_files=True) if k != "question_answering"]
    assert kinds == ["classification", "multi_label", "regression", "tagging"]
    plan, expected = {}, {}
    for kind in kinds:
        with functions_run_eagerly() if eager else contextlib.nullcontext():
            folder = _finetune(tmp_path, kind, vocab, make_init)
        run = str(folder / "run")
        plan[run] = {
            "export": str(folder / "serving"),
            "files": layouts(kind, _inputs(folder, kind)),
            "texts": TEXTS,
            "pairs": [TEXTS[-1 - i] for i in range(len(TEXTS))]
            if kind == "classification"
            else None,
            "workdir": str(folder),
        }
        if one_child:
            assert main(["export", "--checkpoint", run, "--out", plan[run]["export"]]) == 0
            plan[run]["exported"] = True
        expected[run] = kind
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    child = Path(__file__).with_name("round_trip_child.py")
    argv = [sys.executable, str(child), str(plan_file)]
    if one_child:
        raw = {
            "loop": RAW_LOOP,
            "script": _raw_script(),
            "jobs": [_raw_job(s) for s in plan.values()],
        }
        (tmp_path / "raw.json").write_text(json.dumps(raw))
        argv.append(str(tmp_path / "raw.json"))
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    jobs = []
    for run, kind in expected.items():
        got = results[run]
        assert got["init_hidden"] == 16, kind  # --init from the fine-tuned run, in a fresh process
        export = plan[run]["export"]
        reference = got[f"{run}|{next(iter(plan[run]['files']))}"]
        assert len(reference) == len(TEXTS), kind
        layouts = [*plan[run]["files"], "texts"]
        for model in (run, export):
            for layout in layouts:
                rows = got[f"{model}|{layout}"]
                assert len(rows) == len(TEXTS), (kind, model, layout)
                for a, b in zip(reference, rows, strict=True):
                    _close(a, b, f"{kind} {model} {layout}")
        if kind == "tagging":
            assert all(len(r["probabilities"]) == len(r["tags"]) for r in reference)
            assert all(r["words_cut"] == 0 for r in reference)
        jobs.append(_raw_job(plan[run]))
    # Every export's raw serving_default, in one process without electra_tf.
    served = results["raw"] if one_child else _raw_serving(jobs, tmp_path)
    for (run, kind), raw in zip(expected.items(), served, strict=True):
        reference = results[run][f"{run}|{next(iter(plan[run]['files']))}"]
        for a, b in zip(reference, raw, strict=True):
            if kind == "classification":
                assert a["label"] == b["label"]
                np.testing.assert_allclose(list(a["probabilities"].values()), b["probabilities"],
                                           atol=1e-5)  # fmt: skip
            elif kind == "multi_label":
                assert a["labels"] == [n for n in b["labels"] if n]
            elif kind == "regression":
                np.testing.assert_allclose(a["score"], b["score"], atol=1e-5)
            else:
                assert a["tags"] == b["tags"][: len(a["tags"])]
