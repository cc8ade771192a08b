"""`electra-tf bench serving --run`: the PyTorch/ONNX peers hold the run's very weights, the
summary's ratios are the paired per-round ones, and the whole path runs on a toy run."""

import json

import numpy as np
import pytest
import torch
from helpers import scratch_init_one_layer

from electra_tf.bench import task_serving, task_serving_peers
from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary

WORDS = "the food was good bad slow quick ada met bob in rome paris".split()


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    """A classifier fine-tuned for one epoch on 48 rows (dev 16), from a one-layer scratch
    encoder."""
    import electra_tf.finetuning.user_task as user_task
    from electra_tf.datasets.files import Columns

    folder = tmp_path_factory.mktemp("toy")
    vocab = write_vocabulary(list(SPECIAL_TOKENS) + WORDS, folder / "vocab.txt")
    rng = np.random.default_rng(0)
    for split, n in (("train", 48), ("dev", 16)):
        rows = []
        for _ in range(n):
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 7))))
            rows.append({"body": text, "target": "yes" if "good" in text else "no"})
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    init = scratch_init_one_layer(len(SPECIAL_TOKENS) + len(WORDS), vocab)
    original = user_task.load_initialization
    user_task.load_initialization = lambda spec, vocab_file=None: init
    try:
        user_task.finetune_files(
            "scratch", train=folder / "train.jsonl", dev=folder / "dev.jsonl",
            columns=Columns("body", None, "target"), output_dir=folder / "run", progress=None,
            overrides=("epochs=1", "learning_rate=1e-2", "batch_size=16", "max_seq_length=16"),
        )  # fmt: skip
    finally:
        user_task.load_initialization = original
    return folder / "run"


def test_the_pytorch_peer_holds_the_keras_weights(toy_run):
    from electra_tf.tasks.model_folder import load_finetuned

    model, _ = load_finetuned(toy_run)
    module = task_serving_peers.torch_module(model)
    texts = ["the food was good", "bad slow rome", "quick"]
    packed = model.preprocessor.pack_all(texts)
    width = int(np.asarray(packed["padding_mask"]).sum(1).max())
    ids, mask, types = (
        torch.from_numpy(np.asarray(packed[k])[:, :width]).long()
        for k in ("token_ids", "padding_mask", "segment_ids")
    )
    with torch.inference_mode():
        logits = module(input_ids=ids, attention_mask=mask, token_type_ids=types).logits.numpy()
    np.testing.assert_allclose(logits, model.predict(texts, verbose=0), atol=1e-5)


def test_the_summary_pairs_rounds_against_onnxruntime_int8():
    def record(impl, number, p50, rate, labels):
        return {"kind": "serving_task", "impl": impl, "round": number, "batch1_p50_ms": p50,
                "batch1_p99_ms": 2 * p50, "batch_texts_per_s": rate, "peak_rss_mb": 100.0,
                "labels": labels}  # fmt: skip

    records = [
        record("saved_model", 1, 10.0, 50.0, ["a", "b", "a"]),
        record("onnxruntime_int8", 1, 5.0, 100.0, ["a", "b", "b"]),
        record("saved_model", 2, 8.0, 60.0, ["a", "b", "a"]),
        record("onnxruntime_int8", 2, 6.0, 90.0, ["a", "b", "b"]),
    ]
    lines = {line["impl"]: line for line in task_serving.summarize(records)}
    ours = lines["saved_model"]
    assert ours["batch1_p50_ms"] == [9.0, 8.0, 10.0]
    assert ours["batch1_speed_vs_onnxruntime_int8"] == pytest.approx([0.625, 0.5, 0.75])
    assert ours["batch_speed_vs_onnxruntime_int8"] == pytest.approx([(0.5 + 2 / 3) / 2, 0.5, 2 / 3])
    assert lines["onnxruntime_int8"]["labels_as_saved_model"] == [2, 3]
    assert "batch1_speed_vs_onnxruntime" not in ours  # ONNX Runtime float32 did not run
    # With ONNX Runtime float32 too (issue 57's batch-1 bar): 4 / 10 and 4 / 8 ms.
    records += [record("onnxruntime", 1, 4.0, 40.0, ["a", "b", "a"])]
    records += [record("onnxruntime", 2, 4.0, 30.0, ["a", "b", "a"])]
    ours = {line["impl"]: line for line in task_serving.summarize(records)}["saved_model"]
    assert ours["batch1_speed_vs_onnxruntime"] == pytest.approx([0.45, 0.4, 0.5])
    assert ours["batch_speed_vs_onnxruntime"] == pytest.approx([1.625, 1.25, 2.0])
    assert ours["batch1_speed_vs_onnxruntime_int8"] == pytest.approx([0.625, 0.5, 0.75])


def _bench_serving(toy_run, tmp_path, capsys):
    """`electra-tf bench serving --run` on the toy run: (its records, its build line)."""
    from electra_tf.cli import main

    out = tmp_path / "records.jsonl"
    flags = ["bench", "serving", "--run", str(toy_run), "--work", str(tmp_path / "work"),
             "--rounds", "1", "--calls", "3", "--timed-batches", "2", "--batch", "4",
             "--warmup", "1", "--out", str(out)]  # fmt: skip
    assert main(flags) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return records, json.loads(capsys.readouterr().out.splitlines()[0])


def _every_runtime_ran(records, build):
    assert build["torch_vs_keras_max_abs"] < 1e-5 and build["model.onnx_vs_keras_max_abs"] < 1e-4
    runs = {r["impl"]: r for r in records if r["kind"] == "serving_task"}
    assert sorted(runs) == sorted(task_serving.IMPLS), records
    assert all(r["batch1_calls"] == 3 and r["batch_texts_per_s"] > 0 for r in runs.values())
    summary = {r["impl"]: r for r in records if r["kind"] == "serving_task_summary"}
    float32 = ("litert", "onnxruntime", "onnxruntime_parallel", "pipeline", "saved_model_one_lane")
    for impl in float32:  # the same labels as ours
        assert summary[impl]["labels_as_saved_model"] == [16, 16]
    # --threads 2: the two-lane SavedModel on 1 intra-op x 2 inter-op threads, one lane 2 x 1
    assert runs["saved_model"]["tf_intra_inter"] == [1, 2]
    assert runs["saved_model_one_lane"]["tf_intra_inter"] == [2, 1]
    assert (
        runs["litert"]["tf_intra_inter"] == [2, 1] and runs["onnxruntime"]["tf_intra_inter"] is None
    )


@pytest.mark.parametrize(
    "impl,lanes,threads,split",
    [("saved_model", 2, 2, (1, 2)), ("saved_model", 2, 1, (1, 1)), ("saved_model", 2, 4, (2, 2)),
     ("saved_model", 4, 2, (1, 2)), ("saved_model_one_lane", 1, 2, (2, 1)),
     ("saved_model_bf16", None, 2, (2, 1)), ("litert", None, 2, (2, 1))],
)  # fmt: skip
def test_the_thread_split_spends_the_threads_given(tmp_path, impl, lanes, threads, split):
    """The export's lanes (its config; an export before lanes records none) side by side on
    inter-op threads, never more threads in all than --threads."""
    config = tmp_path / impl / "m" / "1" / "assets.extra" / "electra_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"kind": "finetuned"} if lanes is None else {"lanes": lanes}))
    options = task_serving.TaskServingOptions(work=str(tmp_path), impl=impl, threads=threads)
    assert task_serving._thread_split(options, tmp_path) == split


def _launch_in_this_process(command, timeout):
    """`peers.interleave`'s launch without the process: the child's `run_once` (its
    `python -m electra_tf.bench.task_serving FIELDS ROUND` arguments), called here."""
    assert command[1:3] == ["-m", "electra_tf.bench.task_serving"], command
    options = task_serving.TaskServingOptions(**json.loads(command[3]))
    return 0, json.dumps(task_serving.run_once(options, int(command[4]))), ""


def test_bench_serving_runs_every_runtime_on_a_toy_run(toy_run, tmp_path, capsys, monkeypatch):
    """Every runtime built, run, recorded and summarized by the CLI, each runtime's
    `run_once` called in this process in place of its child (the threads are this process's
    already: their setters are recorded, not called). The full form, each runtime in its own
    process: `test_bench_serving_runs_every_runtime_on_a_toy_run_in_processes`."""
    import functools

    import tensorflow as tf

    from electra_tf.bench import peers

    threads = []
    for name in ("intra_op", "inter_op"):
        setter = f"set_{name}_parallelism_threads"
        monkeypatch.setattr(tf.config.threading, setter, lambda n, name=name: threads.append(n))
    monkeypatch.setattr(torch, "set_num_threads", lambda n: threads.append(n))
    launch = functools.partial(peers.interleave, launch=_launch_in_this_process)
    monkeypatch.setattr(peers, "interleave", launch)
    _every_runtime_ran(*_bench_serving(toy_run, tmp_path, capsys))
    assert threads and set(threads) <= {1, 2}  # --threads 2 (default), inter-op 1


@pytest.mark.slow
def test_bench_serving_runs_every_runtime_on_a_toy_run_in_processes(toy_run, tmp_path, capsys):
    _every_runtime_ran(*_bench_serving(toy_run, tmp_path, capsys))
