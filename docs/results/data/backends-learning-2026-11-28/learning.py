"""TensorFlow against JAX: the same tiny-recipe pre-training on the same batches, 3 seeds each.

    python learning.py make PREPARED_TRAIN PREPARED_HELD_OUT OUT_DIR   # TensorFlow: batches as npz
    KERAS_BACKEND=jax python learning.py train OUT_DIR SEED            # one run, one JSON line

`make` reads the prepared shards through the package's `tf.data` pipeline
(`pretraining_dataset`, seed 1) and writes the first STEPS batches of 32 x 64 ids
(`train.npz`) and 16 held-out batches (`held_out.npz`). `train` builds the tiny recipe
at that size with `train.seed=SEED` (initialisation, dropout, masking and sampling all
follow it), fits the first STEPS x TRAIN_BATCH rows in order (`shuffle=False`), and
evaluates the held-out batches (`evaluate`: the same Keras metrics on every backend,
masks drawn from the evaluation streams). It prints the backend, the seed, the mean
`step_loss` of the first and last 20 steps, the held-out figures and the seconds.
"""

import json
import sys
import time

import numpy as np

STEPS, BATCH, LENGTH = 300, 32, 64
TRAIN_BATCH = 16  # each run fits the first STEPS x TRAIN_BATCH rows of train.npz


def config_for(folder: str, seed: int):
    from electra_tf.config import load_recipe

    manifest = json.load(open(f"{folder}/manifest.json"))
    special = [f"data.{name}_id={value}" for name, value in manifest["special_ids"].items()]
    return load_recipe("tiny").override(
        f"model.vocabulary_size={manifest['vocabulary_size']}",
        f"model.max_sequence_length={LENGTH}",
        f"data.sequence_length={LENGTH}",
        f"train.batch_size={TRAIN_BATCH}",
        f"train.num_steps={STEPS}",
        "train.warmup_steps=30",
        f"train.seed={seed}",
        *special,
    )


def make(train_folder: str, held_folder: str, out: str) -> None:
    import shutil

    from electra_tf.data.pipeline import pretraining_dataset

    def arrays(folder, count, repeat):
        manifest = json.load(open(f"{folder}/manifest.json"))
        files = [f"{folder}/{s['file']}" for s in manifest["shards"]]
        counts = [s["examples"] for s in manifest["shards"]]
        dataset = pretraining_dataset(
            files, counts, sequence_length=LENGTH, batch_size=BATCH, seed=1, repeat=repeat
        )
        batches = list(dataset.take(count).as_numpy_iterator())
        return {key: np.stack([b[key] for b in batches]) for key in batches[0]}

    np.savez(f"{out}/train.npz", **arrays(train_folder, STEPS, True))
    np.savez(f"{out}/held_out.npz", **arrays(held_folder, 16, False))
    shutil.copy(f"{train_folder}/manifest.json", f"{out}/manifest.json")


def train(out: str, seed: int) -> None:
    import keras

    from electra_tf.pretraining.pretrainer import ElectraPretrainer

    def flat(name):
        data = np.load(f"{out}/{name}.npz")
        return {key: data[key].reshape(-1, LENGTH) for key in data.files}

    started = time.perf_counter()
    keras.utils.set_random_seed(seed)
    model = ElectraPretrainer(config_for(out, seed))
    model.compile()
    losses = []
    record = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: losses.append(float(logs["step_loss"]))
    )
    rows = {key: value[: STEPS * TRAIN_BATCH] for key, value in flat("train").items()}
    model.fit(rows, batch_size=TRAIN_BATCH, epochs=1, shuffle=False, verbose=0, callbacks=[record])
    losses = np.array(losses)
    held = model.evaluate(flat("held_out"), batch_size=BATCH, verbose=0, return_dict=True)
    print(json.dumps({
        "backend": keras.config.backend(), "seed": seed, "steps": int(len(losses)),
        "first_20_step_loss": round(float(losses[:20].mean()), 4),
        "last_20_step_loss": round(float(losses[-20:].mean()), 4),
        "held_out": {k: round(float(v), 4) for k, v in held.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }), flush=True)  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(*sys.argv[2:5])
    else:
        train(sys.argv[2], int(sys.argv[3]))
