"""Every `tf.` in the model and step code is behind the one switch, or TensorFlow's by nature.

An AST walk of electra_tf/models, layers, ops and pretraining finds each function (or the
module body) that uses `tf.`; each must be in `ALLOWED`, with its kind and reason:

- FAST: a TensorFlow fast path; the function checks `backend.tensorflow_fast_paths()`
  itself and runs its portable twin (`electra_tf.ops.portable`, or the `keras.ops` branch
  beside it) otherwise. tests/ops/test_portable.py holds the pairs equal.
- HELPER: called only from FAST or HELPER functions of its module (checked here).
- KERNEL: `layers/kernels.py`, the encoder's faster layers; an encoder takes them only
  when `_faster_forms()` (which includes the switch) says so at build time (checked here
  on TensorFlow inside `backend.portable()`); their twins are Keras's own layers.
- TF: TensorFlow by nature, on the TensorFlow backend only (`tf.distribute`, checkpoints,
  `tf.data` input, TensorBoard summaries, the TensorFlow step's tapes, the fused Adam
  kernel): its `tf.` uses are all such APIs, or its source holds the guard given.

`python tests/ops/test_tensorflow_switch.py` prints the census table of
docs/results/backends.md.
"""

from __future__ import annotations

import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDERS = ("electra_tf/models", "electra_tf/layers", "electra_tf/ops", "electra_tf/pretraining")
FAST, HELPER, KERNEL, TF = "fast path", "helper", "kernel", "tensorflow"
#: TensorFlow's own machinery (not math): a TF entry using only these needs no guard.
TF_APIS = {"data", "distribute", "train", "summary", "io", "errors", "config", "tpu", "function"}
NAME_GUARD = "backend.name()"

_STEP = "the TensorFlow step (replica context, per-pass tapes); twin: portable_step"
ALLOWED = {
    "models/generator.py:_GatheringMaskedLMHead.call": (FAST, "batched gather of masked rows"),
    **{
        f"layers/kernels.py:{name}": (KERNEL, "faster encoder layer; twin: Keras's own")
        for name in (
            "<module>",
            "dropout",
            "gelu",
            "FastDropout.call",
            "ProjectionDense.call",
            "_materialized_transpose",
            "weight_gradient",
            "matmul_2d",
            "FastDense.call",
            "AdditiveMaskAttention._masked_softmax",
            "mask_bias",
        )
    },
    "ops/losses.py:<module>": (HELPER, "custom gradient of _cross_entropy_rows"),
    "ops/losses.py:_cross_entropy_rows": (HELPER, "cross-entropy with a closed-form gradient"),
    "ops/losses.py:sparse_softmax_cross_entropy": (
        FAST,
        "twin: portable.sparse_softmax_cross_entropy",
    ),
    "ops/losses.py:discriminator_loss": (FAST, "twin: portable.sigmoid_cross_entropy"),
    "ops/losses.py:copy_mixture_loss": (FAST, "twin: portable.copy_mixture_loss"),
    "ops/random.py:_u32": (HELPER, "32-bit words of the counter hash"),
    "ops/random.py:fmix32": (HELPER, "twin: portable.fmix32"),
    "ops/random.py:_absorb": (HELPER, "counter hash step"),
    "ops/random.py:bits_to_uniform": (HELPER, "twin: portable.uniform"),
    "ops/random.py:row_keys": (FAST, "twin: portable.row_keys"),
    "ops/random.py:uniform": (FAST, "twin: portable.uniform"),
    "ops/sampling.py:gather_positions": (FAST, "twin: portable.gather_positions"),
    "ops/sampling.py:scatter_update": (FAST, "twin: portable.scatter_update"),
    "ops/sampling.py:gumbel_max_sample": (FAST, "twin: portable.gumbel_max_sample"),
    "ops/sampling.py:_blocks": (HELPER, "vocabulary blocks of the samplers"),
    "ops/sampling.py:_choose": (HELPER, "inverse-CDF choice in a block"),
    "ops/sampling.py:inverse_cdf_sample": (FAST, "twin: portable.inverse_cdf_sample"),
    "ops/sampling.py:block_argmax": (FAST, "twin: portable.block_argmax"),
    "ops/sampling.py:corrupt": (FAST, "twin: portable.corrupt"),
    "pretraining/objectives/adversarial.py:reinforce_losses": (FAST, "twin: its ops branch"),
    "pretraining/objectives/base.py:Objective.step_output": (FAST, "one AddN; twin: a sum"),
    "pretraining/objectives/unigram.py:sample_unigram": (FAST, "twin: its ops branch"),
    "pretraining/objectives/base.py:StepContext.global_sum": (TF, _STEP, NAME_GUARD),
    "pretraining/objectives/base.py:Objective.loss_pass": (TF, _STEP, NAME_GUARD),
    "pretraining/objectives/base.py:Objective.compiled": (TF, "tf.function (XLA passes)"),
    "pretraining/objectives/base.py:Objective.add_gradients": (
        TF,
        "dense form of TensorFlow's IndexedSlices gradients",
        "isinstance(gradient, tf.IndexedSlices)",
    ),
    "pretraining/objectives/unigram.py:_gfile": (TF, "tf.io.gfile (gs:// paths); else open"),
    "pretraining/pretrainer.py:ElectraPretrainer._context": (TF, _STEP, NAME_GUARD),
    "pretraining/pretrainer.py:ElectraPretrainer.train_step": (TF, _STEP, NAME_GUARD),
    "pretraining/pretrainer.py:ElectraPretrainer.test_step": (TF, _STEP, NAME_GUARD),
    "pretraining/optimizer.py:ElectraAdamW.apply": (
        TF,
        "cross-replica sum before clipping; twin: _apply_portable",
        NAME_GUARD,
    ),
    "pretraining/optimizer.py:ElectraAdamW._backend_update_step": (
        TF,
        "the fused Adam loop, taken only when _fused (TensorFlow, no strategy)",
        "self._fused(",
    ),
    "pretraining/optimizer.py:ElectraAdamW._fused": (TF, "tf.distribute check", NAME_GUARD),
    "pretraining/optimizer.py:ElectraAdamW._update": (
        TF,
        "fused ResourceApplyAdam, when _resource gives handles (TensorFlow only); else ops",
        "if None not in handles",
    ),
    "pretraining/optimizer.py:_resource": (TF, "a TensorFlow variable's handle", NAME_GUARD),
    "pretraining/optimizer.py:_ReplicaSafeLossScaleOptimizer.check_finite": (
        TF,
        "the finiteness verdict agreed across tf.distribute replicas",
        NAME_GUARD,
    ),
    "pretraining/callbacks.py:StepScalars.__init__": (TF, "TensorBoard (tf.summary)"),
    "pretraining/callbacks.py:StepScalars._write": (TF, "TensorBoard (tf.summary)"),
    "pretraining/callbacks.py:StepScalars.on_train_end": (TF, "TensorBoard (tf.summary)"),
    "pretraining/checkpoint.py:checkpoint_object": (TF, "tf.train.Checkpoint"),
    "pretraining/checkpoint.py:Checkpointer.save": (TF, "tf.train.Checkpoint's errors"),
    "pretraining/checkpoint_checks.py:<module>": (TF, "tf.train.Checkpoint's errors"),
    "pretraining/checkpoint_checks.py:_verify_unrecorded": (TF, "tf.train checkpoint reader"),
    "pretraining/tensorflow_checkpoint.py:read_tensorflow_weights": (TF, "tf.train reader"),
    "pretraining/distribute.py:configure_cpu_devices": (TF, "tf.config devices"),
    "pretraining/distribute.py:make_strategy": (TF, "tf.distribute strategies"),
    "pretraining/distribute.py:is_multi_worker": (TF, "tf.distribute strategies"),
    "pretraining/distribute.py:distributed_fit": (TF, "multi-worker tf.data and errors"),
    "pretraining/distribute.py:_traced_steps": (TF, "tf.function of the multi-worker step"),
    "pretraining/evaluation.py:_token_counts": (TF, "tf.data input"),
    "pretraining/evaluation.py:bigram_detector": (TF, "tf.data input"),
    "pretraining/evaluation.py:held_out_report": (TF, "tf.data input"),
    "pretraining/run.py:<module>": (TF, "tf.errors of the TensorBoard writer"),
    "pretraining/run.py:_strategy": (TF, "tf.distribute strategies"),
    "pretraining/run.py:_step_scalars": (TF, "tf.errors of the TensorBoard writer"),
}


def _uses(tree):
    """{qualified owner: (function node or None, [tf attribute names])}; a nested function
    counts as its outermost function (a gradient closure is its function's)."""
    found = {}

    def walk(node, owner, function):
        for child in ast.iter_child_nodes(node):
            here, outer = owner, function
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)) and function is None:
                here = [*owner, child.name]
                outer = child if isinstance(child, ast.FunctionDef) else None
            is_tf = isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name)
            if is_tf and child.value.id == "tf":
                name = ".".join(here) or "<module>"
                found.setdefault(name, (outer, []))[1].append(child.attr)
            walk(child, here, outer)

    walk(tree, [], None)
    return found


def census():
    """{"folder/module.py:owner": (function node, source text, [tf attribute names])}."""
    result = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text()
            key = path.relative_to(ROOT / "electra_tf").as_posix()
            for owner, (node, attrs) in _uses(ast.parse(text)).items():
                result[f"{key}:{owner}"] = (node, text, attrs)
    return result


def _source(node, text):
    return ast.get_source_segment(text, node) if node is not None else ""


def test_every_tf_use_is_listed_with_its_kind_and_reason():
    found = census()
    assert sorted(set(found) - set(ALLOWED)) == [], "unlisted tf. uses (move them to keras.ops)"
    assert sorted(set(ALLOWED) - set(found)) == [], "listed functions that no longer use tf."
    assert all(entry[0] in (FAST, HELPER, KERNEL, TF) and entry[1] for entry in ALLOWED.values())


def test_fast_paths_check_the_switch_themselves():
    found = census()
    for key, (kind, *_) in ALLOWED.items():
        if kind == FAST:
            node, text, _ = found[key]
            assert "backend.tensorflow_fast_paths()" in _source(node, text), key


def test_each_twin_named_exists_in_portable():
    from electra_tf.ops import portable

    twins = [
        reason.split("twin: portable.")[1].split()[0]
        for _, reason, *_ in ALLOWED.values()
        if "twin: portable." in reason
    ]
    assert len(twins) > 10 and [name for name in twins if not hasattr(portable, name)] == []


def test_helpers_are_called_from_fast_paths_only():
    found = census()
    for key, (kind, *_) in ALLOWED.items():
        if kind != HELPER or key.endswith("<module>"):
            continue
        module, name = key.split(":")
        text = (ROOT / "electra_tf" / module).read_text()
        callers = _callers(ast.parse(text), name)
        assert callers, f"{key} is called nowhere"
        for caller in callers:
            assert ALLOWED.get(f"{module}:{caller}", ("",))[0] in (FAST, HELPER), (key, caller)
        assert found[key][0] is not None


def _callers(tree, name):
    """The top-level functions of `tree` whose bodies call `name`."""
    callers = set()
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef) or function.name == name:
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name:
                callers.add(function.name)
    return callers


def test_tensorflow_only_uses_are_its_machinery_or_guarded():
    found = census()
    for key, (kind, _, *guard) in ALLOWED.items():
        if kind != TF:
            continue
        node, text, attrs = found[key]
        if guard:
            source = _source(node, text) if node is not None else text
            assert guard[0] in source, (key, guard[0])
        else:
            assert set(attrs) <= TF_APIS | {"GradientTape"}, (key, set(attrs) - TF_APIS)


def test_the_encoder_takes_no_tensorflow_kernel_inside_portable():
    from electra_tf.layers import kernels
    from electra_tf.models.encoder import ElectraEncoder
    from electra_tf.ops import backend

    sizes = dict(vocabulary_size=20, num_layers=1, hidden_dim=8, embedding_dim=8)
    sizes.update(num_heads=2, intermediate_dim=16, max_sequence_length=8)
    fast_classes = (kernels.FastDropout, kernels.ProjectionDense, kernels.FastDense)
    fast_classes += (kernels.AdditiveMaskAttention,)
    with backend.portable():
        assert kernels.gelu_activation() == "gelu"
        encoder = ElectraEncoder(**sizes)
        encoder.build()
        layers = list(encoder._flatten_layers(include_self=True, recursive=True))
        assert not [layer for layer in layers if isinstance(layer, fast_classes)]
    fast = ElectraEncoder(**sizes)  # on TensorFlow, outside portable(): the fast forms
    fast.build()
    if backend.name() == "tensorflow":
        layers = list(fast._flatten_layers(include_self=True, recursive=True))
        assert [layer for layer in layers if isinstance(layer, fast_classes)]


def table():
    """The census: per module, `tf.` uses by kind (Markdown)."""
    counts = collections.defaultdict(collections.Counter)
    for key, (_, _, attrs) in census().items():
        module = key.split(":")[0]
        counts[module][ALLOWED.get(key, ("unlisted",))[0]] += len(attrs)
    kinds = (FAST, HELPER, KERNEL, TF)
    lines = ["| module | " + " | ".join(kinds) + " | total |", "|---" * (len(kinds) + 2) + "|"]
    for module, count in sorted(counts.items()):
        cells = [str(count.get(kind, "")) for kind in kinds]
        lines.append(f"| `{module}` | " + " | ".join(cells) + f" | {sum(count.values())} |")
    total = collections.Counter()
    for count in counts.values():
        total.update(count)
    cells = [str(total.get(kind, 0)) for kind in kinds]
    lines.append("| **all** | " + " | ".join(cells) + f" | {sum(total.values())} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
