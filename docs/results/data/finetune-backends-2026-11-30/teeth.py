"""A killed fine-tune resumed on JAX or PyTorch with one piece of its state left out:
`no_rng` (PyTorch: torch's generator not put back) or `no_states` (JAX: the dropout seeds not
read back). From the clone's root, with PYTHONPATH=.:tests:tests/finetuning:
`KERAS_BACKEND=torch python teeth.py no_rng WORK`, `KERAS_BACKEND=jax python teeth.py
no_states WORK`; one JSON line each (0 when nothing is left out: the test's case).
"""
import sys, pathlib, shutil, numpy as np, json, keras
import finetune_backend_child as c
from electra_tf.finetuning import engine
what = sys.argv[1]
if what == "no_rng":
    engine.EpochSelection.on_train_batch_begin = lambda self, batch, logs=None: None
elif what == "no_states":
    orig = engine.read_variables
    def partial(model, folder, with_optimizer=True):
        saved = [keras.ops.convert_to_numpy(v.value) for v in model.non_trainable_variables]
        orig(model, folder, with_optimizer)
        for v, s in zip(model.non_trainable_variables, saved): v.assign(s)
    engine.read_variables = partial
root = pathlib.Path(sys.argv[2]) / f"{what}-{keras.config.backend()}"; shutil.rmtree(root, ignore_errors=True); root.mkdir(parents=True)
c.killed_and_resumed(root)
d = dict(np.load(root / "kept.npz")); n = len([k for k in d if k.startswith("whole.")])
print(json.dumps({"left_out": what, "backend": keras.config.backend(), "max_abs_whole_vs_resumed": max(float(np.abs(d[f"whole.{i:03d}"] - d[f"killed.{i:03d}"]).max()) for i in range(n))}))
