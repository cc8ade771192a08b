"""Serving latency and throughput of the exported discriminator, beside Keras and PyTorch.

    electra-tf bench serving --recipe small --batches 1 32 --seq 128

For each batch size it times, in one process and in this order:

1. `keras_predict`: `ElectraDiscriminator.predict_on_batch` (Keras 3);
2. `saved_model`: the exported SavedModel's `serving_default` signature,
   loaded with `tf.saved_model.load`;
3. `saved_model_<layout>_kernels`: the same with the other `kernel_layout`
   than the one "auto" picked here (`transposed` or `plain`; each record
   names its `kernel_layout` and `lanes`);
   `saved_model_two_lanes`: the same with each block as two lanes
   (`export --lanes 2`);
4. `saved_model_keras_layers`: the same, exported with the Keras layers'
   own forward pass in place of `electra_tf.serving.inference`'s;
5. `saved_model_xla`: the export written with `jit_compile=True`
   (`electra-tf export --xla`), its encoder compiled by XLA;
6. `hf_torch`: Hugging Face's `ElectraForPreTraining` of the same size on
   PyTorch (CPU, `torch.inference_mode`), when transformers is installed.

Weights are random (the timing does not depend on them). After warm-up the
runtimes take turns, one timed call each per round, in an order that rotates
from round to round, so a busy spell on a noisy machine falls on all of them.
The JSON lines give p50 and p99 latency (ms), throughput (sequences per
second at the median latency), the ratio of each p50 to the SavedModel's,
and, beside PyTorch, `paired_speedup_vs_hf_torch`: the median over rounds of
PyTorch's time over this runtime's in the same round (above 1: faster).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import time

import numpy as np

__all__ = ["ServingOptions", "run"]


@dataclasses.dataclass
class ServingOptions:
    """What `electra-tf bench serving` times (its flags, one field each)."""

    recipe: str = "small"  # model size
    batches: tuple = (1, 32)
    seq: int = 128
    iterations: int = 100  # timed calls at batch 1 (30% of it at larger batches)
    min_iterations: int = 10  # fewest timed calls
    warmup: int = 5  # untimed calls first
    overrides: tuple = ()  # `--set` config overrides, e.g. model.num_layers=1


def _summary(times) -> dict:
    times = np.asarray(times) * 1000.0
    return {
        "p50_ms": float(np.percentile(times, 50)),
        "p99_ms": float(np.percentile(times, 99)),
        "mean_ms": float(times.mean()),
        "iterations": len(times),
    }


def _time_in_turns(calls: dict, iterations: int, warmup: int) -> dict:
    """Seconds per call of each runtime, `iterations` rounds of one call each, order rotating."""
    for call in calls.values():
        for _ in range(warmup):
            call()
    names = list(calls)
    times = {name: [] for name in names}
    for i in range(iterations):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    return times


def _variants(other_layout: str) -> tuple:
    """The exports timed, (name, export options): `saved_model` (auto layout, one lane) first."""
    return (
        ("saved_model", {}),
        (f"saved_model_{other_layout}_kernels", {"kernel_layout": other_layout}),
        ("saved_model_two_lanes", {"lanes": 2}),
        ("saved_model_keras_layers", {"keras_layers": True}),
        ("saved_model_xla", {"jit_compile": True}),
    )


def _exports(model, folder: str, vocab, seq: int) -> tuple[dict, dict]:
    """Each variant exported and loaded: ({name: serving_default}, {name: its layout})."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401 - the export's text signatures need its ops to load

    from electra_tf.layers.kernels import onednn_runs_avx2
    from electra_tf.serving.saved_model import export_for_serving

    signatures, layouts = {}, {}
    for runtime, options in _variants("plain" if onednn_runs_avx2() else "transposed"):
        exported = export_for_serving(
            model, folder, vocab_file=vocab, warmup=False, seq_length=seq,
            model_name=runtime, **options,
        )  # fmt: skip
        signatures[runtime] = tf.saved_model.load(str(exported)).signatures["serving_default"]
        recorded = json.loads((exported / "assets.extra" / "electra_config.json").read_text())
        layouts[runtime] = {key: recorded[key] for key in ("kernel_layout", "lanes")}
    return signatures, layouts


def _hf_peer(model_config, vocabulary: int):
    """Hugging Face's `ElectraForPreTraining` of the same size, or None without transformers."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    torch.set_num_threads(os.cpu_count() or 1)
    hf_config = transformers.ElectraConfig(
        vocab_size=vocabulary,
        embedding_size=model_config.embedding_dim,
        hidden_size=model_config.hidden_dim,
        num_hidden_layers=model_config.num_layers,
        num_attention_heads=model_config.num_heads,
        intermediate_size=model_config.intermediate_dim,
        hidden_act="gelu",
    )
    return transformers.ElectraForPreTraining(hf_config).eval()


def _candidates(ids, discriminator, signatures: dict, hf_model) -> dict:
    """Name -> a call on the batch `ids` (no padding, one segment), in the timing order."""
    import tensorflow as tf

    mask, types = np.ones_like(ids), np.zeros_like(ids)
    features = {"token_ids": ids, "padding_mask": mask, "segment_ids": types}
    tensors = {
        "input_word_ids": tf.constant(ids),
        "input_mask": tf.constant(mask),
        "input_type_ids": tf.constant(types),
    }
    candidates = {"keras_predict": lambda: discriminator.predict_on_batch(features)}
    for runtime, call in signatures.items():
        candidates[runtime] = lambda call=call: call(**tensors)["rtd_logits"].numpy()
    if hf_model is not None:
        import torch

        torch_inputs = {
            "input_ids": torch.tensor(ids).long(),
            "attention_mask": torch.tensor(mask).long(),
            "token_type_ids": torch.tensor(types).long(),
        }

        def hf_call():
            with torch.inference_mode():
                return hf_model(**torch_inputs).logits.numpy()

        candidates["hf_torch"] = hf_call
    return candidates


def run(args: ServingOptions, emit=None) -> list[dict]:
    """Times every runtime at every batch; `emit` gets each JSON record as it is made."""
    from electra_tf.config import load_recipe
    from electra_tf.data.vocabulary import SPECIAL_TOKENS, write_vocabulary
    from electra_tf.pretraining.pretrainer import ElectraPretrainer
    from electra_tf.serving.saved_model import float32_discriminator

    special_ids = (
        "data.pad_id=0",
        "data.unk_id=1",
        "data.cls_id=2",
        "data.sep_id=3",
        "data.mask_id=4",
    )
    config = load_recipe(args.recipe).override(
        f"data.sequence_length={args.seq}", *special_ids, *args.overrides
    )
    vocabulary = config.model.vocabulary_size
    model = ElectraPretrainer(config)
    discriminator = float32_discriminator(model)
    folder = tempfile.mkdtemp(prefix="electra-serving-bench-")
    vocab = write_vocabulary(
        list(SPECIAL_TOKENS) + [f"w{i}" for i in range(vocabulary - 5)],
        os.path.join(folder, "vocab.txt"),
    )
    signatures, layouts = _exports(model, folder, vocab, args.seq)
    hf_model = _hf_peer(config.model, vocabulary)
    run_keys = {
        "recipe": args.recipe,
        "num_layers": config.model.num_layers,  # after --set
        "vocabulary_size": vocabulary,
    }
    records = []
    rng = np.random.default_rng(0)
    for batch in args.batches:
        ids = rng.integers(5, vocabulary, size=(batch, args.seq)).astype(np.int32)
        ids[:, 0], ids[:, -1] = 2, 3
        candidates = _candidates(ids, discriminator, signatures, hf_model)
        iterations = max(args.min_iterations, int(args.iterations * (1 if batch == 1 else 0.3)))
        times = _time_in_turns(candidates, iterations, args.warmup)
        for record in _batch_records(times, batch, args.seq, layouts, run_keys):
            records.append(record)
            if emit is not None:
                emit(record)
    return records


def _batch_records(times: dict, batch: int, seq: int, layouts: dict, run_keys: dict) -> list:
    """One batch size's JSON records, in the timing order."""
    timings = {name: _summary(seconds) for name, seconds in times.items()}
    reference = timings["saved_model"]["p50_ms"]
    records = []
    for name, timing in timings.items():
        paired = {}
        if "hf_torch" in times:
            ratios = np.asarray(times["hf_torch"]) / np.asarray(times[name])
            paired["paired_speedup_vs_hf_torch"] = float(np.median(ratios))
        records.append({
            "kind": "serving",
            "runtime": name,
            **run_keys,
            "batch": batch,
            "seq_len": seq,
            **timing,
            "sequences_per_s": batch * 1000.0 / timing["p50_ms"],
            "p50_vs_saved_model": timing["p50_ms"] / reference,
            **(layouts.get(name) or {"kernel_layout": None, "lanes": None}),
            **paired,
            "onednn_enabled": os.environ.get("TF_ENABLE_ONEDNN_OPTS"),
        })  # fmt: skip
    return records
