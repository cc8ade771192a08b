"""Times the pre-training input pipeline against the model's consumption; prints JSON lines.

    electra-tf bench input --recipe small --batch 32

Writes `--examples` packed examples (random ids, as `prepare` lays them out)
to TFRecord shards in a temporary folder, or reads `--data` (a prepare
folder), then iterates `electra_tf.data.pipeline.pretraining_dataset`
(interleaved shards, block shuffle, batch, prefetch) for `--budget` seconds,
`--repeats` times, and reports examples/s. The model's consumption is the
recipe's training step timed on the same machine (`bench step`), unless
`--model-steps-per-second` gives it. The ratio says how many times faster
the input is than the step needs: masking runs in the step, so the
pipeline only reads, shuffles and batches; `masking_ms_per_batch` is what
that masking costs inside the step (median of 200 calls).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time

__all__ = ["InputOptions", "run"]


@dataclasses.dataclass
class InputOptions:
    """What `electra-tf bench input` times (its flags, one field each)."""

    recipe: str = "small"  # the recipe whose step is the consumer
    batch: int = 32
    seq: int = 128
    data: str = ""  # a prepare folder to read instead of written examples
    examples: int = 20_000  # examples written
    budget: float = 5.0  # seconds per timing
    repeats: int = 3  # timings (median reported)
    model_steps_per_second: float | None = None  # skip timing the step; use this rate
    model_steps: int = 8  # steps timed for the model


def _write_examples(folder, count, sequence_length, vocabulary, shards=8):
    import numpy as np
    import tensorflow as tf

    from electra_tf.data.tfrecords import serialize_example

    rng = np.random.default_rng(0)
    files = []
    per_shard = -(-count // shards)
    for shard in range(shards):
        name = os.path.join(folder, f"bench-{shard:03d}.tfrecord")
        rows = min(per_shard, count - shard * per_shard)
        with tf.io.TFRecordWriter(name) as writer:
            for _ in range(rows):
                length = int(rng.integers(sequence_length // 2, sequence_length + 1))
                ids = np.zeros(sequence_length, np.int64)
                ids[:length] = rng.integers(999, vocabulary, size=length)
                mask = (np.arange(sequence_length) < length).astype(np.int64)
                segments = ((np.arange(sequence_length) > length // 2) & (mask > 0)).astype(
                    np.int64
                )
                writer.write(serialize_example(ids, mask, segments))
        files.append((name, rows))
    return [f for f, _ in files], [n for _, n in files]


def _masking_ms(config, batch: int, sequence_length: int, calls: int = 200) -> float:
    """Median milliseconds of the step's dynamic masking on one batch (it runs in the step)."""
    import numpy as np
    import tensorflow as tf

    from electra_tf.ops import masking, random

    data, vocabulary = config.data, config.model.vocabulary_size
    n = config.objective.num_predictions(sequence_length)
    ids = np.random.default_rng(0).integers(999, vocabulary, (batch, sequence_length))
    ids[:, 0], ids[:, -1] = data.cls_id, data.sep_id
    ids = tf.constant(ids.astype("int32"))
    rows = tf.range(batch)

    @tf.function
    def mask(step):
        def draw(stream, columns):
            return random.uniform(random.row_keys(1, step, stream, rows), columns)

        return masking.mask_batch(
            ids,
            tf.ones_like(ids),
            position_scores=draw(1, sequence_length),
            action_draw=draw(2, n),
            token_draw=draw(3, n),
            special_ids=(data.cls_id, data.sep_id, data.mask_id, data.pad_id),
            mask_id=data.mask_id,
            vocabulary_size=vocabulary,
            mask_rate=config.objective.mask_rate,
            max_predictions=n,
            mask_token_rate=config.objective.mask_token_rate,
            random_token_rate=config.objective.random_token_rate,
        ).masked_ids

    for step in range(5):
        mask(tf.constant(step, tf.int64))
    times = []
    for step in range(calls):
        start = time.perf_counter()
        mask(tf.constant(step, tf.int64)).numpy()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1000.0)


def run(args: InputOptions) -> dict:
    """Times the input pipeline; returns the JSON record (see the module docstring)."""
    import numpy as np

    from electra_tf.config import load_recipe
    from electra_tf.data.pipeline import pretraining_dataset

    config = load_recipe(args.recipe)
    sequence_length = args.seq
    with tempfile.TemporaryDirectory() as scratch:
        if args.data:
            from electra_tf.data.tfrecords import resolve_files

            files, counts, _ = resolve_files(args.data)
        else:
            files, counts = _write_examples(
                scratch, args.examples, sequence_length, config.model.vocabulary_size
            )
        rates = []
        for repeat in range(args.repeats):
            dataset = pretraining_dataset(
                files,
                counts,
                sequence_length=sequence_length,
                batch_size=args.batch,
                seed=repeat,
            )
            iterator = iter(dataset)
            next(iterator)  # start-up (file opening, first shuffle block)
            batches, start = 0, time.perf_counter()
            while time.perf_counter() - start < args.budget:
                next(iterator)
                batches += 1
            rates.append(batches * args.batch / (time.perf_counter() - start))
    record = {
        "kind": "input_pipeline",
        "recipe": args.recipe,
        "batch": args.batch,
        "seq_len": sequence_length,
        "examples_per_s_median": float(np.median(rates)),
        "examples_per_s": [round(r, 1) for r in rates],
    }
    record["masking_ms_per_batch"] = _masking_ms(config, args.batch, sequence_length)
    model_rate = args.model_steps_per_second
    if model_rate is None:
        from electra_tf.bench.step import StepOptions
        from electra_tf.bench.step import run as time_step

        step_options = StepOptions(
            recipe=args.recipe,
            batch=args.batch,
            seq=sequence_length,
            steps=args.model_steps,
            warmup=2,
        )
        model_rate = time_step(step_options)["steps_per_s"]
    record["model_examples_per_s"] = model_rate * args.batch
    record["input_over_model"] = record["examples_per_s_median"] / record["model_examples_per_s"]
    return record
